// CPU profiles of one phase of a benchmark (BENCH_CPU_PROF=<dir>, make bench-stream). The V8
// profiler through node:inspector, started and stopped on demand, so the profile holds that phase
// only. Loaded with `--import` into the service under test (its env carrying BENCH_CPU_PROF), each
// SIGUSR2 starts the profiler or writes what it took to <dir>/service-<n>.cpuprofile; the benchmark
// process profiles itself with cpuProfiler().
import fs from 'node:fs';
import inspector from 'node:inspector';
import path from 'node:path';

/** start(), then stop(file) writes the profile (Chrome DevTools' .cpuprofile format). */
export function cpuProfiler(): { start(): void; stop(file: string): void } {
  const session = new inspector.Session();
  session.connect();
  return {
    start() {
      session.post('Profiler.enable', () => session.post('Profiler.start'));
    },
    stop(file) {
      session.post('Profiler.stop', (err, r) => {
        if (!err) fs.writeFileSync(file, JSON.stringify(r.profile));
      });
    },
  };
}

if (process.env.BENCH_CPU_PROF && process.argv.some((a) => a.endsWith('server/main.ts'))) {
  const dir = process.env.BENCH_CPU_PROF;
  const profiler = cpuProfiler();
  let running = false;
  let n = 0;
  process.on('SIGUSR2', () => {
    if (running) profiler.stop(path.join(dir, `service-${++n}.cpuprofile`));
    else profiler.start();
    running = !running;
  });
}
