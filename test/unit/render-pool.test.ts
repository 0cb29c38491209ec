import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { expect } from 'chai';
import { ApiError } from '../../server/errors.js';
import { renderQr, type RenderRequest } from '../../server/rendering/index.js';
import { RenderPool, type RenderPoolOptions } from '../../server/rendering/pool.js';
import { costlySvgLogo, samplePngLogo } from '../helpers/sample-logo.js';
import { waitFor } from '../helpers/poll.js';

// The render threads of server/rendering/pool.ts, real threads drawing real images.
describe('Render pool: threads, bounded queue, time budget and image cache', function () {
  this.timeout(120_000);
  const plain: RenderRequest = { text: 'https://qr.example.com/a/b', config: {}, format: 'png', size: 256 };
  const costly: RenderRequest = {
    text: 'https://qr.example.com/a/costly',
    config: { image: costlySvgLogo(), qrOptions: { errorCorrectionLevel: 'H' } },
    format: 'png',
    size: 1024,
  };
  const pools: RenderPool[] = [];
  function pool(options: Partial<RenderPoolOptions> = {}): RenderPool {
    const p = new RenderPool({ threads: 1, queue: 4, timeoutMs: 600_000, cacheBytes: 1 << 20, ...options });
    pools.push(p);
    return p;
  }
  after(async () => Promise.all(pools.map((p) => p.close())));

  async function rejection(p: Promise<unknown>): Promise<ApiError> {
    try {
      await p;
    } catch (err) {
      if (err instanceof ApiError) return err;
      throw err;
    }
    throw new Error('expected an ApiError');
  }

  it('draws in a thread the same bytes as the engine on the calling thread', async () => {
    const p = pool();
    for (const req of [plain, { ...plain, format: 'svg' as const }, { ...plain, format: 'pdf' as const }]) {
      const here = await renderQr(req);
      const there = await p.render(req);
      expect(there.contentType).to.equal(here.contentType);
      expect(Buffer.isBuffer(there.body)).to.equal(true);
      if (req.format !== 'pdf') expect(there.body.equals(here.body), req.format).to.equal(true);
      else expect(there.body.subarray(0, 5).toString()).to.equal('%PDF-');
    }
  });

  it('serves a repeated cache key from the cache, the same bytes, and never across keys (organizations)', async () => {
    const p = pool();
    const req = { ...plain, config: { image: samplePngLogo() } };
    const first = await p.render(req, { cacheKey: '1:"etag"' });
    const again = await p.render(req, { cacheKey: '1:"etag"' });
    expect(p.rendered).to.equal(1);
    expect(again.body.equals(first.body)).to.equal(true);
    // Another organization's key for the very same request is drawn again, not taken from the cache.
    const other = await p.render(req, { cacheKey: '2:"etag"' });
    expect(p.rendered).to.equal(2);
    expect(other.body.equals(first.body)).to.equal(true);
    expect(p.cachedImages).to.equal(2);
    // Identical requests at the same time share one render.
    const [x, y] = await Promise.all([
      p.render({ ...req, size: 300 }, { cacheKey: '1:"other"' }),
      p.render({ ...req, size: 300 }, { cacheKey: '1:"other"' }),
    ]);
    expect(p.rendered).to.equal(3);
    expect(x.body.equals(y.body)).to.equal(true);
  });

  it('keeps the cache within its bytes', async () => {
    const p = pool({ cacheBytes: 40_000 });
    for (let i = 0; i < 12; i++)
      await p.render({ ...plain, text: `https://qr.example.com/x/${i}` }, { cacheKey: `1:${i}` });
    expect(p.cachedImages).to.be.within(1, 11);
    const before = p.rendered;
    await p.render({ ...plain, text: 'https://qr.example.com/x/0' }, { cacheKey: '1:0' });
    expect(p.rendered, 'the oldest image left the cache').to.equal(before + 1);
  });

  it('answers 503 with Retry-After when every thread is busy and the queue is full; background work waits', async () => {
    const p = pool({ threads: 1, queue: 0 });
    await p.render(plain); // the thread is loaded
    const slow = p.render(costly);
    await waitFor(() => p.running === 1, Boolean, 10_000, 5);
    const busy = await rejection(p.render(plain));
    expect(busy.status).to.equal(503);
    expect(busy.code).to.equal('service_unavailable');
    expect(Number(busy.headers['Retry-After'])).to.be.at.least(1);
    expect(busy.extra.retry_after).to.equal(Number(busy.headers['Retry-After']));
    const waited = p.render(plain, { background: true });
    expect((await slow).contentType).to.equal('image/png');
    expect((await waited).contentType).to.equal('image/png');
  });

  it('abandons a render over its time budget, replaces the thread and goes on', async () => {
    const lost: string[] = [];
    const p = pool({ timeoutMs: 2000, onThreadLost: (reason) => lost.push(reason) });
    await p.render(plain);
    // At 4096 px the costly logo alone takes many seconds.
    const err = await rejection(p.render({ ...costly, size: 4096 }));
    expect(err.status).to.equal(503);
    expect(err.message).to.include('budget of 2000 ms');
    expect(lost).to.deep.equal(['stopped after 2000 ms']);
    expect((await p.render(plain)).contentType).to.equal('image/png');
  });

  it('passes a 422 of the engine through, measures logo costs and scannability', async () => {
    const p = pool();
    const bad = await rejection(p.render({ ...plain, config: { image: 'data:image/png;base64,AAAA' } }));
    expect(bad.status).to.equal(422);
    expect(bad.extra.errors).to.have.property('config.image');
    const cheap = await p.logoCost(samplePngLogo(), 100_000);
    const dear = await p.logoCost(costlySvgLogo(), 100_000);
    expect(dear).to.be.greaterThan(cheap * 5);
    expect((await p.scannability({}, 'hello')).decoded).to.equal(true);
  });

  it('counts a logo’s own drawing, not the work of the busy threads beside it', async () => {
    // A render thread runs at the lowest priority: with every core taken by this process's other
    // threads, its wall-clock time stretches many times over, and the process's CPU time counts the
    // others' work. A logo of one circle costs a few ms to draw and is never over the 100 ms budget.
    const p = pool();
    const circle =
      'data:image/svg+xml;base64,' +
      Buffer.from(
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><circle cx="5" cy="5" r="5" fill="#b45309"/></svg>',
      ).toString('base64');
    await p.logoCost(circle, 100); // the thread started, Skia's codecs loaded
    const busy = Array.from({ length: os.availableParallelism() + 1 }, () => new Worker('for (;;);', { eval: true }));
    try {
      await Promise.all(busy.map((w) => new Promise((resolve) => w.once('online', resolve))));
      const costs: number[] = [];
      for (let i = 0; i < 20; i++) costs.push(await p.logoCost(circle, 100));
      expect(
        costs.filter((ms) => ms > 100),
        `costs measured: ${costs.map((ms) => ms.toFixed(1)).join(', ')} ms`,
      ).to.be.empty;
    } finally {
      await Promise.all(busy.map((w) => w.terminate()));
    }
  });
});
