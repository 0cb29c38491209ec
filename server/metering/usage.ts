import type { AppContext } from '../context.js';

/** API calls counted this calendar month (UTC). */
export async function callsUsedThisMonth(app: AppContext, orgId: number): Promise<number> {
  const row = await app
    .db('api_usage_months')
    .where({ org_id: orgId })
    .whereRaw(`month = date_trunc('month', ?::timestamptz at time zone 'UTC')::date`, [app.clock.now()])
    .first('calls');
  return row ? Number(row.calls) : 0;
}
