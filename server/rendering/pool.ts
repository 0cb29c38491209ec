// Renders off the event loop: a few worker threads (./worker.ts) draw every image, scannability check
// and logo measurement, so a slow render never delays a redirect or an API answer in the same
// process. Jobs wait in one bounded queue; when it is full a request is answered 503 with
// Retry-After (background work such as print runs waits for room instead). A job that runs longer
// than its time budget is abandoned: its thread is stopped and replaced. Identical images are
// served from a cache bounded in bytes, keyed by the organization and the image's ETag, and
// identical requests in flight share one render. See docs/rendering.md.
import { Worker } from 'node:worker_threads';
import { ApiError } from '../errors.js';
import type { RenderedImage, RenderRequest } from './index.js';
import type { Scannability } from './scannability.js';
import type { StyleConfig } from './style.js';
import type { RenderJob, RenderJobMessage, RenderReply } from './worker.js';

export interface RenderPoolOptions {
  /** Worker threads (RENDER_THREADS). */
  threads: number;
  /** Jobs that may wait for a thread before requests are answered 503 (RENDER_QUEUE). */
  queue: number;
  /** Longest a job may run before it is abandoned (RENDER_TIMEOUT_MS). */
  timeoutMs: number;
  /** Longest a scannability check may run (SCANNABILITY_TIMEOUT_MS); default: timeoutMs. */
  scannabilityTimeoutMs?: number;
  /** Bytes of images the cache keeps (RENDER_CACHE_MB). 0: no cache. */
  cacheBytes: number;
  /** Told about threads that failed or were stopped. */
  onThreadLost?: (reason: string) => void;
}

interface Job {
  job: RenderJob;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

interface Thread {
  worker: Worker;
  /** Loaded and waiting for work (a job's time budget starts when a ready thread takes it). */
  ready: boolean;
  /** Stopped after overrunning a budget, still counted until it exits (Skia cannot be interrupted). */
  stopping: boolean;
  busy: { id: number; job: Job; timer: NodeJS.Timeout; started: number } | null;
}

const BOOT = new URL('./worker-boot.mjs', import.meta.url);
const ENTRY = new URL('./worker.ts', import.meta.url).href;

/** A job abandoned because it overran the time budget (503 to a client). */
class RenderTimeout extends ApiError {
  constructor(readonly budgetMs: number) {
    super(
      'service_unavailable',
      `The render took longer than its budget of ${budgetMs} ms and was abandoned; a smaller size or a simpler logo draws faster.`,
    );
  }
}

/** A byte-bounded least-recently-used map of images. */
class ImageCache {
  private readonly entries = new Map<string, RenderedImage>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  get(key: string): RenderedImage | undefined {
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key);
      this.entries.set(key, hit);
    }
    return hit;
  }

  set(key: string, image: RenderedImage): void {
    if (image.body.length > this.maxBytes / 4 || this.entries.has(key)) return; // one image never fills it
    this.entries.set(key, image);
    this.bytes += image.body.length;
    for (const [k, v] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(k);
      this.bytes -= v.body.length;
    }
  }

  get size(): number {
    return this.entries.size;
  }
}

export class RenderPool {
  private readonly threads: Thread[] = [];
  private readonly waiting: Job[] = [];
  /** Background jobs waiting for room in the queue. */
  private readonly roomWaiters: (() => void)[] = [];
  private readonly cache: ImageCache;
  private readonly inFlight = new Map<string, Promise<RenderedImage>>();
  private nextId = 1;
  private drawn = 0;
  /** Moving average of a job's run time, for Retry-After. */
  private avgMs = 50;
  private closed = false;

  constructor(private readonly options: RenderPoolOptions) {
    this.cache = new ImageCache(options.cacheBytes);
  }

  /**
   * The image of a request, from the cache when `cacheKey` (the organization and the ETag, say) was
   * drawn before. `background`: wait for room in the queue rather than fail with 503.
   */
  async render(req: RenderRequest, opts: { cacheKey?: string; background?: boolean } = {}): Promise<RenderedImage> {
    const key = opts.cacheKey;
    if (key === undefined || this.options.cacheBytes === 0) return this.draw(req, opts.background);
    const hit = this.cache.get(key);
    if (hit) return hit;
    const pending = this.inFlight.get(key);
    if (pending) return pending;
    const p = this.draw(req, opts.background).then((image) => {
      this.cache.set(key, image);
      return image;
    });
    this.inFlight.set(key, p);
    try {
      return await p;
    } finally {
      this.inFlight.delete(key);
    }
  }

  /** The scannability of a config (the full verdict, or the quick check), measured in a render thread. */
  scannability(config: StyleConfig, text?: string, background = false, full = true): Promise<Scannability> {
    return this.submit({ op: 'scannability', config, text, full }, background) as Promise<Scannability>;
  }

  /**
   * Milliseconds a logo (a data: URI) takes to draw at the measuring size (see ./raster.ts), at
   * least `budgetMs` once it is known to exceed it; the time budget when it overruns that.
   */
  async logoCost(uri: string, budgetMs: number): Promise<number> {
    try {
      return (await this.submit({ op: 'logoCost', uri, budgetMs }, false)) as number;
    } catch (err) {
      if (err instanceof RenderTimeout) return err.budgetMs;
      throw err;
    }
  }

  /** Starts the threads before the first render needs them (a thread takes a moment to load). */
  warm(): void {
    while (this.threads.length < this.options.threads && !this.closed) this.spawn();
  }

  /** Images in the cache (for tests and metrics). */
  get cachedImages(): number {
    return this.cache.size;
  }

  /** Images drawn by the threads so far (cache hits and shared renders not counted). */
  get rendered(): number {
    return this.drawn;
  }

  /** Jobs a thread is working on. */
  get running(): number {
    return this.threads.filter((t) => t.busy).length;
  }

  /** Jobs waiting for a thread. */
  get queued(): number {
    return this.waiting.length;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.waiting.splice(0)) job.reject(ApiError.unavailable('The service is shutting down.'));
    for (const wake of this.roomWaiters.splice(0)) wake();
    await Promise.all(this.threads.splice(0).map((t) => t.worker.terminate()));
  }

  private async draw(req: RenderRequest, background = false): Promise<RenderedImage> {
    const image = (await this.submit({ op: 'render', req }, background)) as RenderedImage & { body: Uint8Array };
    this.drawn++;
    return { ...image, body: Buffer.from(image.body.buffer, image.body.byteOffset, image.body.byteLength) };
  }

  private async submit(job: RenderJob, background: boolean): Promise<unknown> {
    if (this.closed) throw ApiError.unavailable('The service is shutting down.');
    if (background) {
      while (this.full() && !this.closed) await new Promise<void>((wake) => this.roomWaiters.push(wake));
    } else if (this.full()) {
      const seconds = Math.max(
        1,
        Math.ceil(((this.waiting.length + this.options.threads) * this.avgMs) / this.options.threads / 1000),
      );
      throw new ApiError(
        'service_unavailable',
        `Every render thread is busy and ${this.waiting.length} renders are waiting; retry in ${seconds} s.`,
        { retry_after: seconds },
        { 'Retry-After': String(seconds) },
      );
    }
    return new Promise((resolve, reject) => {
      this.waiting.push({ job, resolve, reject });
      this.pump();
    });
  }

  /** Whether every thread (started or still to start) has a job and the queue holds `queue` more. */
  private full(): boolean {
    const free = this.threads.filter((t) => !t.busy && !t.stopping).length + this.options.threads - this.threads.length;
    return this.waiting.length >= this.options.queue + free;
  }

  private spawn(): void {
    const worker = new Worker(BOOT, { workerData: { entry: ENTRY } });
    worker.unref(); // an idle pool never keeps the process alive
    const thread: Thread = { worker, ready: false, stopping: false, busy: null };
    worker.on('message', (reply: RenderReply | 'ready') => {
      if (reply === 'ready') {
        thread.ready = true;
        this.pump();
      } else this.settle(thread, reply);
    });
    worker.on('error', (err) => this.lose(thread, err.message));
    worker.on('exit', (code) => this.lose(thread, `exited with code ${code}`));
    this.threads.push(thread);
  }

  private pump(): void {
    while (this.waiting.length && !this.closed) {
      const thread = this.threads.find((t) => t.ready && !t.busy && !t.stopping);
      if (!thread) {
        // Threads start on demand (and again after one was lost): as many as jobs wait, up to `threads`.
        const starting = this.threads.filter((t) => !t.ready && !t.stopping).length;
        for (let n = starting; n < this.waiting.length && this.threads.length < this.options.threads; n++) this.spawn();
        break;
      }
      const job = this.waiting.shift()!;
      const id = this.nextId++;
      const budget =
        job.job.op === 'scannability'
          ? (this.options.scannabilityTimeoutMs ?? this.options.timeoutMs)
          : this.options.timeoutMs;
      const timer = setTimeout(() => this.abandon(thread, budget), budget);
      thread.busy = { id, job, timer, started: performance.now() };
      thread.worker.postMessage({ id, job: job.job } satisfies RenderJobMessage);
    }
    if (!this.full()) for (const wake of this.roomWaiters.splice(0)) wake();
  }

  private settle(thread: Thread, reply: RenderReply): void {
    const busy = thread.busy;
    if (!busy || busy.id !== reply.id) return;
    clearTimeout(busy.timer);
    thread.busy = null;
    this.avgMs = 0.8 * this.avgMs + 0.2 * (performance.now() - busy.started);
    if (reply.ok) busy.job.resolve(reply.value);
    else if (reply.api)
      busy.job.reject(new ApiError(reply.api.code, reply.api.message, reply.api.extra, reply.api.headers));
    else busy.job.reject(new Error(`render failed: ${reply.message}`));
    this.pump();
  }

  /**
   * A job over its time budget fails at once; its thread is stopped, and a new one takes its place
   * once it has exited (a thread inside a Skia call exits when the call returns), so no more than
   * `threads` ever draw at once.
   */
  private abandon(thread: Thread, budgetMs: number): void {
    const busy = thread.busy;
    if (!busy) return;
    thread.busy = null;
    thread.stopping = true;
    busy.job.reject(new RenderTimeout(budgetMs));
    this.options.onThreadLost?.(`stopped after ${budgetMs} ms`);
    void thread.worker.terminate();
  }

  private lose(thread: Thread, reason: string): void {
    if (thread.stopping) {
      this.remove(thread, null);
      return;
    }
    const busy = thread.busy;
    thread.busy = null;
    if (busy) {
      clearTimeout(busy.timer);
      busy.job.reject(new Error(`render thread failed: ${reason}`));
    }
    // A thread that could not even start: the jobs waiting for it fail rather than start it again and again.
    if (!thread.ready && this.threads.includes(thread)) {
      for (const job of this.waiting.splice(0)) job.reject(new Error(`render thread failed to start: ${reason}`));
    }
    this.remove(thread, reason);
  }

  private remove(thread: Thread, reason: string | null): void {
    const i = this.threads.indexOf(thread);
    if (i < 0) return;
    this.threads.splice(i, 1);
    if (!this.closed && reason !== null) this.options.onThreadLost?.(reason);
    this.pump();
  }
}
