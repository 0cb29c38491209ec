// Migration 0050: styles stored when `imageSize` was a share of the symbol's area get the
// qr-code-styling coefficient that clears the same square of modules (for a square logo and the
// sample text the check encodes), so each renders with the same logo box as before.
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import type { Knex } from 'knex';
import { createLogger } from '../../server/logger.js';
import { sceneOf } from '../../server/rendering/index.js';
import { SAMPLE_TEXT } from '../../server/rendering/scannability.js';
import type { StyleConfig } from '../../server/rendering/style.js';
import { migratePostgres } from '../../server/stores/migrate.js';
import { createKnex } from '../../server/stores/postgres.js';
import { samplePngLogo } from '../helpers/sample-logo.js';
import { emptyDatabase, testLogLevel, testRoot } from '../helpers/stores.js';

const SQL_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../sql');
const MIGRATION = '0050_qr_style_image_size.sql';

/**
 * Modules across the square the old reading cleared: a square logo of `imageSize` x the symbol's
 * area, centred, plus `imageOptions.margin` (pixels at `width`) around it; every module it touched.
 */
function oldClearedAcross(config: StyleConfig, n: number): number {
  const side = Math.min(config.width ?? 300, config.height ?? config.width ?? 300);
  const px = config.margin !== undefined ? (side - 2 * config.margin) / n : side / (n + 8);
  const w = Math.sqrt((config.imageOptions?.imageSize ?? 0.1) * n * n);
  const m = (config.imageOptions?.margin ?? 0) / px;
  const x0 = (n - w) / 2 - m;
  const x1 = (n + w) / 2 + m;
  let count = 0;
  for (let col = 0; col < n; col++) if (col + 1 > x0 && col < x1) count++;
  return count;
}

describe('migration 0050: imageSize converted to qr-code-styling’s meaning', function () {
  this.timeout(60_000);
  let db: Knex;
  after(async () => db?.destroy());

  it('gives every stored style with a logo the coefficient that clears the same modules as before', async () => {
    db = createKnex(await emptyDatabase(), 2);
    const dir = path.join(testRoot(), 'mig-0050');
    await fs.mkdir(dir, { recursive: true });
    // The one table the migration reads, as sql/0002 made it (the columns it touches).
    await fs.writeFile(
      path.join(dir, '0002_styles.sql'),
      'create table qr_styles (id bigserial primary key, config jsonb not null);',
    );
    const log = createLogger(testLogLevel(), { test: true });
    await migratePostgres(db, log, dir);
    const logo = samplePngLogo();
    const before: StyleConfig[] = [
      { image: logo }, // the old default, 0.1 of the area, at Q
      { image: logo, imageOptions: { imageSize: 0.1 }, qrOptions: { errorCorrectionLevel: 'H' } },
      { image: logo, imageOptions: { imageSize: 0.05, margin: 4 }, qrOptions: { errorCorrectionLevel: 'M' } },
      { image: logo, imageOptions: { imageSize: 0.03 }, qrOptions: { errorCorrectionLevel: 'L' }, width: 600 },
      { image: logo, imageOptions: { imageSize: 0.15, margin: 10 }, margin: 12, width: 512, height: 400 },
    ];
    const plain: StyleConfig = { dotsOptions: { type: 'dots' } };
    for (const config of [...before, plain]) await db('qr_styles').insert({ config: JSON.stringify(config) });
    await fs.copyFile(path.join(SQL_DIR, MIGRATION), path.join(dir, MIGRATION));
    expect(await migratePostgres(db, log, dir)).to.deep.equal([50]);

    const after = (await db('qr_styles').orderBy('id').select('config')).map((r: { config: StyleConfig }) => r.config);
    expect(after.at(-1), 'a style without a logo is left alone').to.deep.equal(plain);
    before.forEach((old, i) => {
      const now = after[i];
      expect(now.imageOptions?.imageSize).to.be.a('number').within(0, 1);
      // Everything else is kept.
      expect({ ...now, imageOptions: { ...now.imageOptions, imageSize: 0 } }).to.deep.equal({
        ...old,
        imageOptions: { ...old.imageOptions, imageSize: 0 },
      });
      const scene = sceneOf({ text: SAMPLE_TEXT, config: now });
      const n = scene.modules;
      const hiddenRows = Array.from({ length: n }, (_, r) => scene.hidden.subarray(r * n, r * n + n).some(Boolean));
      const across = Math.max(
        ...Array.from({ length: n }, (_, r) => scene.hidden.subarray(r * n, r * n + n).reduce((a, b) => a + b, 0)),
      );
      const expected = oldClearedAcross(old, n);
      expect(across, `style ${i}: modules cleared across`).to.equal(expected);
      expect(hiddenRows.filter(Boolean).length, `style ${i}: modules cleared down`).to.equal(expected);
      // The logo is drawn inside that box, centred as before.
      const logoBox = scene.logo!;
      expect(logoBox.x + logoBox.w / 2).to.be.closeTo(scene.symbol.x + n / 2, 1e-9);
      expect(logoBox.w)
        .to.be.at.most(expected)
        .and.above(expected - 2 - (2 * (old.imageOptions?.margin ?? 0)) / 2);
    });
  });
});
