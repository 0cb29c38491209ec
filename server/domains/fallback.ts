// Shared fallback origins come from FALLBACK_ORIGINS; each is a row in `domains` (type fallback,
// no organization) so that it has a stable ULID across restarts and processes.
import type { Knex } from 'knex';
import { ulid } from 'ulid';

export async function syncFallbackDomains(db: Knex, origins: string[]): Promise<void> {
  for (const origin of origins) {
    const host = new URL(origin).host.toLowerCase();
    await db.raw(
      `insert into domains (ulid, org_id, host, origin, type, status, ssl_status, is_primary, verified_at)
       select ?, null, ?, ?, 'fallback', 'active', 'active', false, now()
       where not exists (select 1 from domains where lower(host) = ? and type = 'fallback' and deleted_at is null)`,
      [ulid(), host, origin, host],
    );
    await db('domains')
      .where({ type: 'fallback' })
      .whereRaw('lower(host) = ?', [host])
      .whereNull('deleted_at')
      .update({ origin });
  }
}

/** The first shared fallback domain (created from FALLBACK_ORIGINS when missing): demo data uses it. */
export async function firstFallbackDomain(db: Knex, origins: string[]): Promise<{ id: number; ulid: string }> {
  const find = () =>
    db('domains').where({ type: 'fallback' }).whereNull('deleted_at').orderBy('id').first('id', 'ulid');
  let row = await find();
  if (!row) {
    await syncFallbackDomains(db, origins);
    row = await find();
  }
  if (!row) throw new Error('no fallback domain: set FALLBACK_ORIGINS');
  return { id: Number(row.id), ulid: row.ulid };
}
