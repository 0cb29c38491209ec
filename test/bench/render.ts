// make bench-render: p50/p95 of one render, in process, for a plain and a fully styled code
// (gradient, logo, frame) as SVG and as PNG 1024 px, beside the QR library's own SVG and PNG output
// (qrcode's toString / toBuffer) measured in the same run as the baseline. Goals: styled SVG
// p95 <= 5 ms, styled PNG 1024 px p95 <= 30 ms. BENCH_RENDERS sets the renders per case (default 200).
// The CPU time per render (all the process's threads) is printed too: unlike wall-clock time it
// hardly moves when other work shares the machine. Then the styled PNG taken apart, phase by phase
// (the scene, Skia's drawing, reading the pixels back, the PNG encoding), so that a missed p95 shows
// where its time went. Exits non-zero when a goal is missed.
import QRCode from 'qrcode';
import type { Canvas } from '@napi-rs/canvas';
import { renderQr, sceneOf, type StyleConfig } from '../../server/rendering/index.js';
import { encodePng } from '../../server/rendering/png.js';
import { sceneToCanvas } from '../../server/rendering/raster.js';
import { exitIfGoalsMissed, machine } from './lib.js';
import { samplePngLogo } from '../helpers/sample-logo.js';
import os from 'node:os';

const N = Number(process.env.BENCH_RENDERS ?? 200);
const TEXT = 'https://qr.example.com/acme/spring-sale-2026';

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

interface Row {
  label: string;
  p50: number;
  p95: number;
  /** CPU time of the process (every thread, so also the encoders on libuv's pool) per render. */
  cpu: number;
}

async function time(label: string, fn: () => Promise<unknown>): Promise<Row> {
  for (let i = 0; i < Math.min(20, N); i++) await fn(); // warm-up
  const ts: number[] = [];
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < N; i++) {
    const t = performance.now();
    await fn();
    ts.push(performance.now() - t);
  }
  const cpu = process.cpuUsage(cpu0);
  ts.sort((a, b) => a - b);
  return { label, p50: quantile(ts, 0.5), p95: quantile(ts, 0.95), cpu: (cpu.user + cpu.system) / 1000 / N };
}

const styled: StyleConfig = {
  qrOptions: { errorCorrectionLevel: 'H' },
  dotsOptions: {
    type: 'classy-rounded',
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
  backgroundOptions: { color: '#fffde7' },
  image: samplePngLogo(),
  imageOptions: { imageSize: 0.4, margin: 4 },
  frame: { style: 'banner', text: 'Scan me', color: '#1a237e' },
};

const rows = [
  await time('qrcode library: plain SVG (toString)', () =>
    QRCode.toString(TEXT, { type: 'svg', errorCorrectionLevel: 'Q' }),
  ),
  await time('ours: plain SVG', () => renderQr({ text: TEXT, config: {}, format: 'svg' })),
  await time('ours: styled SVG', () => renderQr({ text: TEXT, config: styled, format: 'svg' })),
  await time('qrcode library: plain PNG 1024 (toBuffer)', () =>
    QRCode.toBuffer(TEXT, { type: 'png', width: 1024, errorCorrectionLevel: 'Q' }),
  ),
  await time('ours: plain PNG 1024', () => renderQr({ text: TEXT, config: {}, format: 'png', size: 1024 })),
  await time('ours: styled PNG 1024', () => renderQr({ text: TEXT, config: styled, format: 'png', size: 1024 })),
  await time('ours: styled PDF', () => renderQr({ text: TEXT, config: styled, format: 'pdf' })),
];

console.log(
  `machine: ${machine()}; load average ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')} (shared: other work runs beside this)`,
);
console.log(`renders per case: ${N}`);
console.log('| case | p50 ms | p95 ms | CPU ms per render |');
console.log('|---|---|---|---|');
for (const r of rows) console.log(`| ${r.label} | ${r.p50.toFixed(2)} | ${r.p95.toFixed(2)} | ${r.cpu.toFixed(2)} |`);

// The styled PNG's phases, one render after another as renderQr does them (server/rendering/raster.ts,
// sceneToPng): wall-clock ms of each, p50 and p95 over N renders.
const [scene, draw, readBack, encode]: number[][] = [[], [], [], []];
let canvas: Canvas | undefined;
for (let i = 0; i < N + 20; i++) {
  const t0 = performance.now();
  const s = sceneOf({ text: TEXT, config: styled });
  const t1 = performance.now();
  canvas = await sceneToCanvas(s, 1024, undefined, canvas);
  const ctx = canvas.getContext('2d');
  ctx.getImageData(0, 0, 1, 1); // Skia draws when pixels are first read
  const t2 = performance.now();
  const { data, width, height } = ctx.getImageData(0, 0, canvas.width, canvas.height);
  const t3 = performance.now();
  await encodePng(data, width, height);
  const t4 = performance.now();
  if (i < 20) continue; // warm-up
  scene.push(t1 - t0);
  draw.push(t2 - t1);
  readBack.push(t3 - t2);
  encode.push(t4 - t3);
}
console.log(`\nstyled PNG 1024 px by phase (${N} renders, wall-clock ms):`);
console.log('| phase | p50 ms | p95 ms |');
console.log('|---|---|---|');
const phases: [string, number[]][] = [
  ['scene', scene],
  ['draw (Skia)', draw],
  ['read back (getImageData)', readBack],
  ['encode (png.ts)', encode],
];
for (const [label, ts] of phases) {
  ts.sort((a, b) => a - b);
  console.log(`| ${label} | ${quantile(ts, 0.5).toFixed(2)} | ${quantile(ts, 0.95).toFixed(2)} |`);
}

const svg = rows[2].p95;
const png = rows[5].p95;
console.log(`\ngoal styled SVG p95 <= 5 ms: ${svg.toFixed(2)} ms ${svg <= 5 ? 'met' : 'NOT met'}`);
console.log(`goal styled PNG 1024 p95 <= 30 ms: ${png.toFixed(2)} ms ${png <= 30 ? 'met' : 'NOT met'}`);
exitIfGoalsMissed([
  ...(svg > 5 ? ['styled SVG p95 > 5 ms'] : []),
  ...(png > 30 ? ['styled PNG 1024 p95 > 30 ms'] : []),
]);
