// The one way tests wait for something that happens elsewhere (another process, a notification, a
// job): poll with a deadline, never a sleep that hopes.

/**
 * Polls `fn` until `ok` accepts its value and returns that value; fails the test with the last value
 * seen when `timeoutMs` passes first. `ok` defaults to "truthy".
 */
export async function waitFor<T>(
  fn: () => T | Promise<T>,
  ok: (v: T) => boolean = Boolean,
  timeoutMs = 10_000,
  stepMs = 20,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > until)
      throw new Error(`condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}
