// Shared fallback origins come from FALLBACK_ORIGINS; each is a row in `domains` (type fallback,
// no organization) so that it has a stable ULID across restarts and processes. Only the service
// reconciles them, at start (server/main.ts through boot's reconcileFallbacks): qrctl and the
// standalone worker may run with another environment and never change them. An origin no longer
// configured is retired, not deleted: its codes keep their URLs, new codes cannot use it.
import type { Knex } from 'knex';
import { ulid } from 'ulid';
import { sqlState, UNIQUE_VIOLATION } from '../errors.js';
import type { Logger } from '../logger.js';

export interface FallbackChanges {
  added: string[];
  reactivated: string[];
  retired: string[];
}

const hostOf = (origin: string) => new URL(origin).host.toLowerCase();

export async function reconcileFallbackDomains(db: Knex, origins: string[], log: Logger): Promise<FallbackChanges> {
  const changes: FallbackChanges = { added: [], reactivated: [], retired: [] };
  const configured = new Map(origins.map((o) => [hostOf(o), o]));
  await db.transaction(async (trx) => {
    // Two services starting at once take turns.
    await trx.raw('select pg_advisory_xact_lock(727275)');
    const rows = await trx('domains')
      .where({ type: 'fallback' })
      .whereNull('deleted_at')
      .orderBy('id')
      .select<{ id: number; host: string; origin: string | null; status: string }[]>('id', 'host', 'origin', 'status');
    const byHost = new Map(rows.map((r) => [r.host.toLowerCase(), r]));
    for (const [host, origin] of configured) {
      const row = byHost.get(host);
      if (!row) {
        try {
          await trx.transaction((sp) =>
            sp('domains').insert({
              ulid: ulid(),
              org_id: null,
              host,
              origin,
              type: 'fallback',
              status: 'active',
              ssl_status: 'active',
              verified_at: trx.fn.now(),
            }),
          );
          changes.added.push(origin);
        } catch (err) {
          if (sqlState(err) !== UNIQUE_VIOLATION) throw err;
          log.error({ origin }, 'FALLBACK_ORIGINS names a host that a custom domain holds; it is not registered');
        }
      } else if (row.status !== 'active' || row.origin !== origin) {
        await trx('domains').where({ id: row.id }).update({ status: 'active', origin, updated_at: trx.fn.now() });
        if (row.status !== 'active') changes.reactivated.push(origin);
      }
    }
    for (const row of rows) {
      if (row.status === 'active' && !configured.has(row.host.toLowerCase())) {
        await trx('domains').where({ id: row.id }).update({ status: 'retired', updated_at: trx.fn.now() });
        changes.retired.push(row.origin ?? row.host);
      }
    }
  });
  if (changes.added.length || changes.reactivated.length || changes.retired.length) {
    log.info(changes, 'fallback origins reconciled with FALLBACK_ORIGINS');
  }
  return changes;
}

/** The first active shared fallback domain (demo data uses it). */
export async function firstFallbackDomain(db: Knex): Promise<{ id: number; ulid: string }> {
  const row = await db('domains')
    .where({ type: 'fallback', status: 'active' })
    .whereNull('deleted_at')
    .orderBy('id')
    .first('id', 'ulid');
  if (!row) {
    throw new Error(
      'No shared fallback domain is registered: start the service once (it registers FALLBACK_ORIGINS), then try again.',
    );
  }
  return { id: Number(row.id), ulid: row.ulid };
}
