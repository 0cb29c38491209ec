import { RenderPool } from '../server/rendering/pool.ts';
const pool = new RenderPool({ threads: 2, queue: 4, timeoutMs: 60000, cacheBytes: 1 << 20, onThreadLost: (r) => console.log('lost', r) });
for (let i = 0; i < 3; i++) {
  const t0 = performance.now();
  try {
    const img = await pool.render({ text: 'hello', config: {}, format: 'png' }, { cacheKey: i === 2 ? 'a' : undefined });
    console.log(img.body.length, img.contentType, (performance.now() - t0).toFixed(0));
  } catch (e) { console.log('err', e); }
}
await pool.close();
