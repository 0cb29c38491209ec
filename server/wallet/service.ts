// The prepaid wallet: reads with a paginated ledger, and operator top-ups. API usage debits are
// written by the admission function (server/metering/admission.ts).
import { ulid } from 'ulid';
import type { OrgRecord } from '../auth/principal.js';
import type { AppContext } from '../context.js';
import { ApiError } from '../errors.js';
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

/** Operator top-up: credits the wallet and records a credit transaction, atomically. */
export async function topUp(app: AppContext, org: OrgRecord, amountMinor: number, reference?: string) {
  if (!Number.isSafeInteger(amountMinor) || amountMinor <= 0)
    throw ApiError.field('amount', 'Must be a positive amount.');
  return app.db.transaction(async (trx) => {
    const now = app.clock.now();
    const [w] = await trx('wallets')
      .where({ org_id: org.id })
      .increment('balance_minor', amountMinor)
      .update({ updated_at: now })
      .returning('balance_minor');
    if (!w) throw ApiError.notFound('wallet');
    await trx('wallet_transactions').insert({
      ulid: ulid(now.getTime()),
      org_id: org.id,
      type: 'credit',
      amount_minor: amountMinor,
      balance_after_minor: w.balance_minor,
      reference_type: 'top_up',
      reference_id: reference ?? null,
      created_at: now,
      updated_at: now,
    });
    return { balanceMinor: w.balance_minor as number };
  });
}
