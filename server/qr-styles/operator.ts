// Operator checks of stored styles (qrctl styles check): which configs do not fit the style schema
// (styles saved while config was free-form), with every field error, so that nothing is silently
// dropped; and, on request, a fresh scannability measurement of the styles that fit.
import type { AppContext } from '../context.js';
import type { FieldErrors } from '../errors.js';
import type { Scannability } from '../rendering/scannability.js';
import { resolveBrandKit, usesBrandKit, type BrandKit } from '../rendering/brand-kit.js';
import type { StyleConfig } from '../rendering/style.js';
import { styleConfigErrors } from '../rendering/validate.js';

interface StyleFinding {
  organization: string;
  style_ulid: string;
  name: string;
  /** Field errors when the config does not fit the schema. */
  errors?: FieldErrors;
  /** The new measurement (--rescan), or why none could be made. */
  scannability?: Scannability;
  problem?: string;
}

export interface StylesCheck {
  checked: number;
  not_fitting: number;
  rescanned: number;
  findings: StyleFinding[];
}

/** Every live style, or those of one organization, in batches of 500. */
export async function checkStoredStyles(
  app: AppContext,
  opts: { orgId?: number; rescan?: boolean } = {},
): Promise<StylesCheck> {
  const out: StylesCheck = { checked: 0, not_fitting: 0, rescanned: 0, findings: [] };
  let after = 0;
  for (;;) {
    const q = app
      .db('qr_styles as s')
      .join('organizations as o', 'o.id', 's.org_id')
      .leftJoin('brands as b', 'b.id', 's.brand_id')
      .whereNull('s.deleted_at')
      .where('s.id', '>', after)
      .orderBy('s.id')
      .limit(500)
      .select('s.id', 's.org_id', 's.ulid', 's.name', 's.config', 'o.ulid as org_ulid', 'b.brand_kit');
    if (opts.orgId !== undefined) q.where('s.org_id', opts.orgId);
    const rows: { id: number; ulid: string; name: string; config: unknown; org_ulid: string; brand_kit: BrandKit }[] =
      await q;
    if (!rows.length) return out;
    for (const row of rows) {
      after = Number(row.id);
      out.checked++;
      const base = { organization: row.org_ulid, style_ulid: row.ulid, name: row.name };
      const errors = styleConfigErrors(row.config);
      if (errors) {
        out.not_fitting++;
        out.findings.push({ ...base, errors });
        continue;
      }
      if (!opts.rescan) continue;
      let config = row.config as StyleConfig;
      try {
        if (usesBrandKit(config)) config = resolveBrandKit(config, row.brand_kit);
        const scannability = await app.renders.scannability(config, undefined, true);
        await app
          .db('qr_styles')
          .where({ id: row.id })
          .update({ scannability: JSON.stringify(scannability) });
        out.rescanned++;
        if (scannability.verdict !== 'pass') out.findings.push({ ...base, scannability });
      } catch (err) {
        out.findings.push({ ...base, problem: (err as Error).message });
      }
    }
  }
}
