// The 1024 px styles the verdict benchmarks judge (./verdict.ts, ./verdict-steps.ts), and the CPU
// time of the decoder processes this process started.
import fs from 'node:fs';
import type { StyleConfig } from '../../server/rendering/index.js';
import { samplePngLogo } from '../helpers/sample-logo.js';
import { cpuSeconds } from './lib.js';

// A realistic mix of designs, each 1024 px wide: plain, round dots, and a full one (gradient, logo,
// ring finder patterns, a frame).
export const STYLES: StyleConfig[] = [
  { width: 1024 },
  { width: 1024, dotsOptions: { type: 'dots', color: '#1b5e20' }, qrOptions: { errorCorrectionLevel: 'M' } },
  {
    width: 1024,
    qrOptions: { errorCorrectionLevel: 'H' },
    dotsOptions: {
      type: 'rounded',
      gradient: {
        type: 'linear',
        rotation: 0.8,
        colorStops: [
          { offset: 0, color: '#1a237e' },
          { offset: 1, color: '#6a1b9a' },
        ],
      },
    },
    cornersSquareOptions: { type: 'extra-rounded', color: '#c2185b' },
    cornersDotOptions: { type: 'dot', color: '#000000' },
    image: samplePngLogo(),
    imageOptions: { imageSize: 0.4, margin: 8 },
    frame: { style: 'box', text: 'Scan me' },
  },
];

/** The processes this one started (the decoder processes of server/rendering/decoders.ts). */
function children(): number[] {
  const tasks = fs.readdirSync(`/proc/${process.pid}/task`);
  return tasks.flatMap((t) =>
    fs.readFileSync(`/proc/${process.pid}/task/${t}/children`, 'utf8').split(' ').filter(Boolean).map(Number),
  );
}

export async function childrenCpuMs(): Promise<number> {
  let s = 0;
  for (const pid of children()) s += await cpuSeconds(pid).catch(() => 0);
  return s * 1000;
}
