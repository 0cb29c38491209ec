// The full verdict's profile, step by step (not part of `make bench-render`; run it with
// `node --import tsx test/bench/verdict-steps.ts`): CPU ms of each step of one print size (the
// scene, the ideal image, the photograph at the camera's resolution, each capture, each family
// reading each capture) over the styles of ./verdict-styles.ts, in this process and in the decoder
// processes (read from /proc: one family is asked at a time, so their CPU is that family's). Each
// capture is made from a fresh set of captures, so its figure includes the grey image and the lens
// blur that a verdict's captures share. BENCH_STEP_REPEATS sets the repeats per step (default 10).
import os from 'node:os';
import { photograph, captures, CAPTURES, capturePxPerModule, DEFAULT_PRINT } from '../../server/rendering/captures.js';
import { decodeWith, DECODER_FAMILIES, type Gray } from '../../server/rendering/decoders.js';
import { sceneOf } from '../../server/rendering/index.js';
import { sceneToCanvas } from '../../server/rendering/raster.js';
import { SAMPLE_TEXT } from '../../server/rendering/scannability.js';
import { machine } from './lib.js';
import { childrenCpuMs, STYLES } from './verdict-styles.js';

const R = Number(process.env.BENCH_STEP_REPEATS ?? 10);
const figures = new Map<string, { thread: number; aside: number }>();

async function step<T>(label: string, fn: () => Promise<T> | T): Promise<T> {
  let out!: T;
  const aside0 = await childrenCpuMs();
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < R; i++) out = await fn();
  const cpu = process.cpuUsage(cpu0);
  const aside = (await childrenCpuMs()) - aside0;
  const f = figures.get(label) ?? { thread: 0, aside: 0 };
  f.thread += (cpu.user + cpu.system) / 1000 / R / STYLES.length;
  f.aside += aside / R / STYLES.length;
  figures.set(label, f);
  return out;
}

const load0 = os.loadavg()[0];
// The first round warms up (WebAssembly compiled, decoder processes started) and is not counted.
for (const counted of [false, true]) {
  figures.clear();
  for (const config of STYLES) {
    const scene = await step('the scene (once a verdict)', () => sceneOf({ text: SAMPLE_TEXT, config }));
    await step('the ideal image, 4 px a module (once a verdict)', () =>
      sceneToCanvas(scene, Math.ceil(scene.width * 4), '#ffffff'),
    );
    const px = Math.min(10, capturePxPerModule(scene.modules, DEFAULT_PRINT));
    const photo = await step('the photograph at the declared size', () => photograph(scene, px));
    for (const kind of CAPTURES) {
      const img: Gray = await step(`capture: ${kind}`, () => captures(photo)(kind));
      for (const family of DECODER_FAMILIES) await step(`  ${family} reads ${kind}`, () => decodeWith(family, img));
    }
  }
  if (!counted) continue;
  console.log(
    `machine: ${machine()}; load average ${load0.toFixed(1)} at the start, ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} at the end; ${R} repeats a step on each of ${STYLES.length} styles`,
  );
  console.log('| step (the declared print size) | CPU ms, this process | CPU ms, decoder processes |');
  console.log('|---|---|---|');
  for (const [label, f] of figures) console.log(`| ${label} | ${f.thread.toFixed(1)} | ${f.aside.toFixed(1)} |`);
}
process.exit(0);
