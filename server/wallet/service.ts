// The prepaid wallet: reads with a paginated ledger, and operator top-ups. API usage debits are
// written by the admission function (server/metering/admission.ts).
import type { OrgRecord } from '../auth/principal.js';
import type { AppContext } from '../context.js';
import { ApiError } from '../errors.js';
import { recordAudit } from '../audit/service.js';
import { fastUlid } from '../ids.js';
import { formatMinor } from './money.js';

interface TxnRow {
  ulid: string;
  type: 'debit' | 'credit';
  amount_minor: number;
  balance_after_minor: number;
  reference_type: string | null;
  created_at: Date;
}

export async function readWallet(app: AppContext, org: OrgRecord, page: number, perPage: number) {
  const wallet = await app.db('wallets').where({ org_id: org.id }).first();
  if (!wallet) throw ApiError.notFound('wallet');
  const [{ total }] = await app
    .db('wallet_transactions')
    .where({ org_id: org.id })
    .count<{ total: number }[]>('* as total');
  const rows = (await app
    .db('wallet_transactions')
    .where({ org_id: org.id })
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(perPage)
    .offset((page - 1) * perPage)) as TxnRow[];
  const money = (v: number) => formatMinor(v, org.currency);
  return {
    balance: money(wallet.balance_minor),
    currency: org.currency,
    low_balance_threshold:
      wallet.low_balance_threshold_minor === null ? null : money(wallet.low_balance_threshold_minor),
    updated_at: (wallet.updated_at as Date).toISOString(),
    transactions: {
      data: rows.map((r) => ({
        ulid: r.ulid,
        type: r.type,
        amount: money(r.amount_minor),
        balance_after: money(r.balance_after_minor),
        reference_type: r.reference_type,
        created_at: r.created_at.toISOString(),
      })),
      meta: {
        current_page: page,
        last_page: Math.max(1, Math.ceil(Number(total) / perPage)),
        per_page: perPage,
        total: Number(total),
      },
    },
  };
}

export interface TopUpActor {
  /** The staff user recording it in the dashboard; null for an operator (qrctl). */
  userId: number | null;
  /** How the audit log names the actor: the staff user's email, or qrctl. */
  name: string;
}

/**
 * A top-up (operators with qrctl, platform staff in the dashboard): credits the wallet, records a
 * credit transaction (reference_type top_up) and an audit entry, atomically.
 */
export async function topUp(
  app: AppContext,
  org: OrgRecord,
  amountMinor: number,
  opts: { reference?: string | null; actor?: TopUpActor } = {},
) {
  if (!Number.isSafeInteger(amountMinor) || amountMinor <= 0)
    throw ApiError.field('amount', 'Must be a positive amount.');
  const actor = opts.actor ?? { userId: null, name: 'operator' };
  return app.db.transaction(async (trx) => {
    const now = app.clock.now();
    const [w] = await trx('wallets')
      .where({ org_id: org.id })
      .increment('balance_minor', amountMinor)
      .update({ updated_at: now })
      .returning('balance_minor');
    if (!w) throw ApiError.notFound('wallet');
    const ulid = fastUlid(now.getTime());
    await trx('wallet_transactions').insert({
      ulid,
      org_id: org.id,
      type: 'credit',
      amount_minor: amountMinor,
      balance_after_minor: w.balance_minor,
      reference_type: 'top_up',
      reference_id: opts.reference ?? null,
      created_at: now,
      updated_at: now,
    });
    await recordAudit(trx, {
      orgId: org.id,
      actorUserId: actor.userId,
      actor: actor.name,
      action: 'wallet.top_up',
      details: {
        amount: formatMinor(amountMinor, org.currency),
        currency: org.currency,
        reference: opts.reference ?? null,
        transaction: ulid,
      },
      at: now,
    });
    return { balanceMinor: w.balance_minor as number, transactionUlid: ulid };
  });
}

/**
 * The low-balance threshold (dashboard wallet page, qrctl wallet threshold): minor units, or null for
 * none. API usage debits that take the balance below it announce wallet.low_balance (the admission
 * function, sql/0015_admission_events.sql).
 */
export async function setLowBalanceThreshold(app: AppContext, org: OrgRecord, thresholdMinor: number | null) {
  const n = await app
    .db('wallets')
    .where({ org_id: org.id })
    .update({ low_balance_threshold_minor: thresholdMinor, updated_at: app.clock.now() });
  if (!n) throw ApiError.notFound('wallet');
}
