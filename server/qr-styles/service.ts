// QR style presets of an organization, optionally tied to one of its brands. Deleting is soft.
// Every service and data-access function takes the organization first.
import type { Knex } from 'knex';
import { ulid as newUlid } from 'ulid';
import { findBrand } from '../brands/service.js';
import type { OrgRecord } from '../auth/principal.js';
import type { AppContext } from '../context.js';
import { ApiError } from '../errors.js';
import type { CreateStyleBody, StyleInput } from './schema.js';

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
  created_at: Date;
  updated_at: Date;
}

export interface StyleOut {
  ulid: string;
  name: string;
  config: Record<string, unknown>;
  is_preset: boolean;
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

export async function createStyle(app: AppContext, org: OrgRecord, input: CreateStyleBody): Promise<StyleRow> {
  const brandId = input.brand_ulid ? await brandIdFor(app.db, org, input.brand_ulid) : null;
  const now = app.clock.now();
  const id = newUlid(now.getTime());
  await app.db('qr_styles').insert({
    ulid: id,
    org_id: org.id,
    brand_id: brandId,
    name: input.name,
    config: JSON.stringify(input.config),
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
  if (patch.config !== undefined) changes.config = JSON.stringify(patch.config);
  if (patch.is_preset !== undefined) changes.is_preset = patch.is_preset;
  if (patch.brand_ulid !== undefined) {
    changes.brand_id = patch.brand_ulid === null ? null : await brandIdFor(app.db, org, patch.brand_ulid);
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
