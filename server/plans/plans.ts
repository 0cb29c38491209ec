// Plans are seeded by sql/0001_foundation.sql; codes are <tier>_monthly and <tier>_annual.
import type { Knex } from 'knex';
import type { PlanRecord } from '../auth/principal.js';

interface PlanRow {
  id: number;
  code: string;
  name: string;
  api_access: boolean;
  api_rate_limit_per_min: number;
  calls_included_month: number | null;
  features: string[];
}

export function toPlanRecord(r: PlanRow): PlanRecord {
  return {
    id: r.id,
    code: r.code,
    name: r.name,
    apiAccess: r.api_access,
    rateLimitPerMin: r.api_rate_limit_per_min,
    callsIncludedMonth: r.calls_included_month,
    features: r.features,
  };
}

export async function findPlanById(db: Knex | Knex.Transaction, id: number): Promise<PlanRecord | null> {
  const row = await db<PlanRow>('plans').where({ id }).first();
  return row ? toPlanRecord(row) : null;
}

export async function findPlanByCode(db: Knex, code: string): Promise<PlanRecord | null> {
  const row = await db<PlanRow>('plans').where({ code }).first();
  return row ? toPlanRecord(row) : null;
}

export async function listPlanCodes(db: Knex): Promise<string[]> {
  return (await db('plans').select('code').orderBy('id')).map((r: { code: string }) => r.code);
}

/** The spec's PlanSummary. */
export function planSummary(plan: PlanRecord | null): { code: string; name: string } | null {
  return plan ? { code: plan.code, name: plan.name } : null;
}
