// Readiness of a process's listeners for /readyz: ready only when every listener the process is
// configured to run (API, redirect, redirect TLS) is accepting connections, and not while stopping.

export type ListenerName = 'api' | 'redirect' | 'redirect_tls';

export class Readiness {
  private readonly expected = new Set<ListenerName>();
  private readonly probes = new Map<ListenerName, () => boolean>();
  private stopping = false;

  /** Declares the listeners this process runs, before any of them starts. */
  expect(...names: ListenerName[]): void {
    for (const n of names) this.expected.add(n);
  }

  /** A listener that started; the probe says whether it still accepts (e.g. `() => server.listening`). */
  listening(name: ListenerName, probe: () => boolean): void {
    this.probes.set(name, probe);
  }

  /** Shutdown began: not ready any more, whatever still listens while it drains. */
  stop(): void {
    this.stopping = true;
  }

  /** Each expected listener's state, and whether all of them accept. */
  state(): { ready: boolean; listeners: Partial<Record<ListenerName, 'accepting' | 'not accepting'>> } {
    const listeners: Partial<Record<ListenerName, 'accepting' | 'not accepting'>> = {};
    let ready = !this.stopping;
    for (const name of this.expected) {
      const accepting = !this.stopping && (this.probes.get(name)?.() ?? false);
      listeners[name] = accepting ? 'accepting' : 'not accepting';
      if (!accepting) ready = false;
    }
    return { ready, listeners };
  }
}
