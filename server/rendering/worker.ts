// A render thread of the pool (./pool.ts): draws images, measures scannability and logo costs off
// the event loop that answers redirects and API calls. Requests and answers are plain messages; an
// image's bytes move back without a copy.
import { readlinkSync } from 'node:fs';
import os from 'node:os';
import { parentPort } from 'node:worker_threads';
import { ApiError } from '../errors.js';
import { renderQr, type RenderRequest } from './index.js';
import { parseLogo } from './logo.js';
import { logoDrawCost } from './raster.js';
import { checkScannability } from './scannability.js';
import { warmDecoders } from './decoders.js';
import type { StyleConfig } from './style.js';

export type RenderJob =
  | { op: 'render'; req: RenderRequest }
  | { op: 'scannability'; config: StyleConfig; text?: string; full?: boolean }
  | { op: 'logoCost'; uri: string; budgetMs: number };

export interface RenderJobMessage {
  id: number;
  job: RenderJob;
}

export type RenderReply =
  | { id: number; ok: true; value: unknown }
  | {
      id: number;
      ok: false;
      /** An ApiError's parts (a 422 on a bad logo), else the message of an unexpected error. */
      api?: {
        code: ApiError['code'];
        message: string;
        extra: Record<string, unknown>;
        headers: Record<string, string>;
      };
      message: string;
    };

async function run(job: RenderJob): Promise<{ value: unknown; transfer: ArrayBuffer[] }> {
  if (job.op === 'render') {
    const image = await renderQr(job.req);
    // A Buffer may be a view of Node's shared pool: copy it into an ArrayBuffer of its own to move it.
    const bytes = new Uint8Array(image.body.byteLength);
    bytes.set(image.body);
    return { value: { ...image, body: bytes }, transfer: [bytes.buffer] };
  }
  if (job.op === 'scannability') {
    return { value: await checkScannability(job.config, job.text, job.full ?? true), transfer: [] };
  }
  return { value: await logoDrawCost(parseLogo(job.uri), job.budgetMs), transfer: [] };
}

/**
 * On Linux, the lowest scheduling priority for this thread alone (setpriority on its thread id): when
 * the cores are short, the event loop that answers redirects goes first and renders take what is left.
 */
function yieldToEventLoop(): void {
  try {
    const tid = Number(/\/task\/(\d+)$/.exec(readlinkSync('/proc/thread-self'))?.[1]);
    if (tid > 0) os.setPriority(tid, 19);
  } catch {
    // Not Linux, or not allowed: the thread keeps the process's priority.
  }
}

const port = parentPort;
if (port) {
  yieldToEventLoop();
  warmDecoders();
  port.on('message', (msg: RenderJobMessage) => {
    run(msg.job).then(
      ({ value, transfer }) => port.postMessage({ id: msg.id, ok: true, value } satisfies RenderReply, transfer),
      (err: unknown) => {
        const reply: RenderReply =
          err instanceof ApiError
            ? {
                id: msg.id,
                ok: false,
                api: { code: err.code, message: err.message, extra: err.extra, headers: err.headers },
                message: err.message,
              }
            : { id: msg.id, ok: false, message: err instanceof Error ? err.message : String(err) };
        port.postMessage(reply);
      },
    );
  });
  port.postMessage('ready');
}
