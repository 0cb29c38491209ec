// QR style presets of an organization, optionally tied to one of its brands. Deleting is soft.
// Every service and data-access function takes the organization first.
import type { Knex } from 'knex';
import { ulid as newUlid } from 'ulid';
import { findBrand } from '../brands/service.js';
import type { OrgRecord } from '../auth/principal.js';
import type { AppContext } from '../context.js';
import { ApiError } from '../errors.js';
import { resolveBrandKit, usesBrandKit, type BrandKit } from '../rendering/brand-kit.js';
import { logoDataUri, parseLogo } from '../rendering/logo.js';
import { SAMPLE_TEXT, type Scannability } from '../rendering/scannability.js';
import { LOGO_COST_PX } from '../rendering/raster.js';
import type { StyleConfig } from '../rendering/style.js';
import type { RenderRequest } from '../rendering/index.js';
import { styleConfigErrors } from '../rendering/validate.js';
import type { CreateStyleBody, PreviewStyleBody, StyleInput } from './schema.js';

export interface StyleRow {
  id: number;
  ulid: string;
  org_id: number;
  brand_id: number | null;
  brand_ulid: string | null;
  brand_name: string | null;
  name: string;
  config: Record<string, unknown>;
  is_preset: boolean;
  /** Null for a style stored before the check existed (qrctl styles check --rescan fills it). */
  scannability: Scannability | null;
  created_at: Date;
  updated_at: Date;
}

export interface StyleOut {
  ulid: string;
  name: string;
  config: Record<string, unknown>;
  is_preset: boolean;
  scannability: Scannability | null;
  brand: { ulid: string; name: string } | null;
  created_at: Date;
  updated_at: Date;
}

export function renderStyle(row: StyleRow): StyleOut {
  return {
    ulid: row.ulid,
    name: row.name,
    config: row.config,
    is_preset: row.is_preset,
    scannability: row.scannability ?? null,
    brand: row.brand_ulid && row.brand_name !== null ? { ulid: row.brand_ulid, name: row.brand_name } : null,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

function styles(db: Knex | Knex.Transaction, org: OrgRecord): Knex.QueryBuilder {
  return db('qr_styles as s')
    .leftJoin('brands as b', 'b.id', 's.brand_id')
    .where('s.org_id', org.id)
    .whereNull('s.deleted_at')
    .select('s.*', 'b.ulid as brand_ulid', 'b.name as brand_name');
}

/** The brand's id, or a 422 on `field` when the brand is not the organization's. */
export async function brandIdFor(db: Knex, org: OrgRecord, brandUlid: string, field = 'brand_ulid'): Promise<number> {
  const brand = await findBrand(db, org, brandUlid);
  if (!brand) throw ApiError.field(field, 'No such brand in this organization.');
  return brand.id;
}

export async function listStylesPage(
  db: Knex,
  org: OrgRecord,
  filter: { brandId?: number },
  afterId: number,
  n: number,
): Promise<StyleRow[]> {
  const q = styles(db, org).where('s.id', '>', afterId).orderBy('s.id').limit(n);
  if (filter.brandId !== undefined) q.where('s.brand_id', filter.brandId);
  return q;
}

export async function findStyle(
  db: Knex | Knex.Transaction,
  org: OrgRecord,
  styleUlid: string,
): Promise<StyleRow | undefined> {
  return styles(db, org).where('s.ulid', styleUlid.toUpperCase()).first();
}

export async function getStyle(db: Knex, org: OrgRecord, styleUlid: string): Promise<StyleRow> {
  const row = await findStyle(db, org, styleUlid);
  if (!row) throw ApiError.notFound('QR style');
  return row;
}

/** The brand kit of a brand of the organization. */
async function brandKitOf(db: Knex | Knex.Transaction, org: OrgRecord, brandId: number | null): Promise<BrandKit> {
  if (brandId === null) return null;
  const row = await db('brands').where({ org_id: org.id, id: brandId }).first('brand_kit');
  return (row?.brand_kit as BrandKit) ?? null;
}

/** A config with its brand-kit references answered by the brand (422 when there is no brand or no answer). */
export async function resolveStyleConfig(
  db: Knex | Knex.Transaction,
  org: OrgRecord,
  config: StyleConfig,
  brandId: number | null,
): Promise<StyleConfig> {
  if (!usesBrandKit(config)) return config;
  if (brandId === null) {
    throw ApiError.field('config', 'Brand-kit references (brand:...) need a brand: give the style a brand_ulid.');
  }
  return resolveBrandKit(config, await brandKitOf(db, org, brandId));
}

/** An SVG logo is stored sanitised; other configs are stored as given. */
function storedConfig(config: StyleConfig): StyleConfig {
  if (!config.image?.startsWith('data:image/svg+xml')) return config;
  return { ...config, image: logoDataUri(parseLogo(config.image)) };
}

/**
 * The scannability of a config as it will be drawn (brand-kit references resolved), measured by the
 * render threads; first, a logo that costs more than LOGO_DRAW_BUDGET_MS to draw is refused with a
 * 422 on `field` (a render draws it again for every image).
 */
async function measureStyle(app: AppContext, resolved: StyleConfig, field = 'config.image'): Promise<Scannability> {
  if (resolved.image) {
    const budget = app.config.logoDrawBudgetMs;
    const ms = await app.renders.logoCost(resolved.image, budget);
    if (ms > budget) {
      throw ApiError.field(
        field,
        `The logo takes ${ms >= app.config.renderTimeoutMs ? 'over ' : ''}${Math.round(ms)} ms to draw at ${LOGO_COST_PX} px, more than the ${budget} ms a logo may cost (LOGO_DRAW_BUDGET_MS): simplify it (SVG filters such as blur and thousands of shapes are costly) or use a PNG.`,
      );
    }
  }
  return app.renders.scannability(resolved);
}

/**
 * Checks a config as it will be drawn: a failing one is refused (422 style_not_scannable with the
 * reasons), a warning one is kept with them.
 */
async function judgeStyle(
  app: AppContext,
  org: OrgRecord,
  config: StyleConfig,
  brandId: number | null,
): Promise<Scannability> {
  const scannability = await measureStyle(app, await resolveStyleConfig(app.db, org, config, brandId));
  if (scannability.verdict === 'fail') throw ApiError.styleNotScannable(scannability);
  return scannability;
}

/** A style's new measurement, to be stored once the brand kit it was measured with is saved. */
export interface StyleVerdict {
  id: number;
  scannability: Scannability;
}

/**
 * A brand's new kit judged against every style of the brand that refers to it, before it is saved:
 * the styles' new measurements, or 422 naming the first style the kit would break (a reference it
 * cannot answer, or a symbol that would no longer scan). A stored style never fails its own check.
 */
export async function judgeBrandKit(
  app: AppContext,
  org: OrgRecord,
  brandUlid: string,
  kit: BrandKit,
): Promise<StyleVerdict[]> {
  const brand = await findBrand(app.db, org, brandUlid);
  if (!brand) return []; // the update itself answers 404
  const styles = (await app
    .db('qr_styles')
    .where({ org_id: org.id, brand_id: brand.id })
    .orderBy('id')
    .select('id', 'ulid', 'name', 'config')) as { id: number; ulid: string; name: string; config: StyleConfig }[];
  const verdicts: StyleVerdict[] = [];
  for (const style of styles) {
    if (!usesBrandKit(style.config) || styleConfigErrors(style.config)) continue;
    const named = `style "${style.name}" (${style.ulid})`;
    let resolved: StyleConfig;
    try {
      resolved = resolveBrandKit(style.config, kit);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      const errors = (err.extra.errors ?? {}) as Record<string, string[]>;
      const why = Object.entries(errors).map(([field, messages]) => `${field}: ${messages.join(' ')}`);
      throw ApiError.field('brand_kit', `The brand's ${named} refers to it: ${why.join('; ')}`);
    }
    const scannability = await measureStyle(app, resolved, 'brand_kit');
    if (scannability.verdict === 'fail') {
      throw new ApiError(
        'style_not_scannable',
        `With this brand kit the brand's ${named} would not scan reliably: ${scannability.reasons.join(', ')}.`,
        { reasons: scannability.reasons, scannability, style_ulid: style.ulid },
      );
    }
    verdicts.push({ id: style.id, scannability });
  }
  return verdicts;
}

/** Stores the measurements judgeBrandKit made, once the kit is saved. */
export async function storeVerdicts(db: Knex, org: OrgRecord, verdicts: StyleVerdict[], now: Date): Promise<void> {
  for (const v of verdicts) {
    await db('qr_styles')
      .where({ org_id: org.id, id: v.id })
      .update({ scannability: JSON.stringify(v.scannability), updated_at: now });
  }
}

export async function createStyle(app: AppContext, org: OrgRecord, input: CreateStyleBody): Promise<StyleRow> {
  const brandId = input.brand_ulid ? await brandIdFor(app.db, org, input.brand_ulid) : null;
  const config = storedConfig(input.config);
  const scannability = await judgeStyle(app, org, config, brandId);
  const now = app.clock.now();
  const id = newUlid(now.getTime());
  await app.db('qr_styles').insert({
    ulid: id,
    org_id: org.id,
    brand_id: brandId,
    name: input.name,
    config: JSON.stringify(config),
    scannability: JSON.stringify(scannability),
    is_preset: input.is_preset ?? false,
    created_at: now,
    updated_at: now,
  });
  return getStyle(app.db, org, id);
}

export async function updateStyle(
  app: AppContext,
  org: OrgRecord,
  styleUlid: string,
  patch: StyleInput,
): Promise<StyleRow> {
  const row = await getStyle(app.db, org, styleUlid);
  const changes: Record<string, unknown> = {};
  if (patch.name !== undefined) changes.name = patch.name;
  if (patch.is_preset !== undefined) changes.is_preset = patch.is_preset;
  let brandId = row.brand_id;
  if (patch.brand_ulid !== undefined) {
    brandId = patch.brand_ulid === null ? null : await brandIdFor(app.db, org, patch.brand_ulid);
    changes.brand_id = brandId;
  }
  // A new config or brand (whose kit the config may use) is judged again, as it will be drawn.
  // (A stored config that predates the schema is left for qrctl styles check to report.)
  if (patch.config !== undefined || (patch.brand_ulid !== undefined && !styleConfigErrors(row.config))) {
    const config = patch.config !== undefined ? storedConfig(patch.config) : (row.config as StyleConfig);
    changes.scannability = JSON.stringify(await judgeStyle(app, org, config, brandId));
    if (patch.config !== undefined) changes.config = JSON.stringify(config);
  }
  if (!Object.keys(changes).length) return row;
  changes.updated_at = app.clock.now();
  await app.db('qr_styles').where({ id: row.id, org_id: org.id }).whereNull('deleted_at').update(changes);
  return getStyle(app.db, org, row.ulid);
}

/** Soft delete: codes keep pointing at the style; it disappears from lists and reads. */
export async function deleteStyle(app: AppContext, org: OrgRecord, styleUlid: string): Promise<void> {
  const now = app.clock.now();
  const n = await app
    .db('qr_styles')
    .where({ org_id: org.id, ulid: styleUlid.toUpperCase() })
    .whereNull('deleted_at')
    .update({ deleted_at: now, updated_at: now });
  if (!n) throw ApiError.notFound('QR style');
}

export interface StylePreviewOut {
  image: string;
  format: 'svg' | 'png';
  content_type: string;
  scannability: Scannability;
}

/** The image of a config and its scannability; nothing is saved, a failing config is answered too. */
export async function previewStyle(app: AppContext, org: OrgRecord, input: PreviewStyleBody): Promise<StylePreviewOut> {
  const brandId = input.brand_ulid ? await brandIdFor(app.db, org, input.brand_ulid) : null;
  const config = await resolveStyleConfig(app.db, org, input.config, brandId);
  return drawAndCheck(
    app,
    { text: input.text ?? SAMPLE_TEXT, config, format: input.format ?? 'svg', size: input.size ?? 512 },
    input.check !== 'quick',
  );
}

/** A preview's image (SVG text or PNG in base64) and the scannability of that very text and config. */
export async function drawAndCheck(
  app: AppContext,
  request: RenderRequest & { format: 'svg' | 'png' },
  full: boolean,
): Promise<StylePreviewOut> {
  const [image, scannability] = await Promise.all([
    app.renders.render(request),
    app.renders.scannability(request.config, request.text, false, full),
  ]);
  return {
    image: request.format === 'svg' ? image.body.toString('utf8') : image.body.toString('base64'),
    format: request.format,
    content_type: image.contentType,
    scannability,
  };
}
