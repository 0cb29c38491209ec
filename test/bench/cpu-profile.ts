// CPU profiles of one phase of a benchmark (BENCH_CPU_PROF=<dir>, make bench-stream). The V8
// profiler through node:inspector, started and stopped on demand, so the profile holds that phase
// only. Loaded with `--import` into the service under test (its env carrying BENCH_CPU_PROF), each
// SIGUSR2 starts the profiler or writes what it took to <dir>/service-<n>.cpuprofile; the benchmark
// process profiles itself with cpuProfiler(); redirect-server.ts (make bench-redirect) uses it too.
import fs from 'node:fs';
import inspector from 'node:inspector';
import path from 'node:path';

/**
 * start(), then stop(file) writes the profile (Chrome DevTools' .cpuprofile format) under a
 * temporary name first, so a benchmark waiting for the file never reads it half written.
 * `intervalUs`: the sampling interval (V8's default when absent).
 */
export function cpuProfiler(intervalUs?: number): { start(): void; stop(file: string): Promise<void> } {
  const session = new inspector.Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) =>
      session.post(method, params, (err, result) => (err ? reject(err) : resolve(result))),
    );
  return {
    start() {
      void post('Profiler.enable')
        .then(() => (intervalUs ? post('Profiler.setSamplingInterval', { interval: intervalUs }) : undefined))
        .then(() => post('Profiler.start'));
    },
    async stop(file) {
      const { profile } = (await post('Profiler.stop')) as { profile: object };
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(`${file}.tmp`, JSON.stringify(profile));
      fs.renameSync(`${file}.tmp`, file);
    },
  };
}

if (process.env.BENCH_CPU_PROF && process.argv.some((a) => a.endsWith('server/main.ts'))) {
  const dir = process.env.BENCH_CPU_PROF;
  const profiler = cpuProfiler();
  let running = false;
  let n = 0;
  process.on('SIGUSR2', () => {
    if (running) void profiler.stop(path.join(dir, `service-${++n}.cpuprofile`));
    else profiler.start();
    running = !running;
  });
}
