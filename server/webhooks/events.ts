// The webhook events: their types, how a service writes one into the outbox in its own
// transaction (webhook_emit, sql/0014_webhooks.sql), and the body a delivery sends.
import type { Knex } from 'knex';
import { formatMinor } from '../wallet/money.js';

export const EVENT_TYPES = [
  'code.created',
  'code.updated',
  'code.deleted',
  'code.scans_dropped',
  'code.scans_spiked',
  'bulk_import.completed',
  'bulk_import.failed',
  'domain.verified',
  'domain.unverified',
  'domain.certificate_issued',
  'domain.certificate_failed',
  'wallet.low_balance',
  'usage.included_calls_exhausted',
  'scans.batch',
  'conversion.recorded',
  'webhook.disabled',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** Delivered to every enabled endpoint of the organization, whatever types it lists. */
const NOTICE_TYPES: ReadonlySet<EventType> = new Set(['webhook.disabled']);

type Db = Knex | Knex.Transaction;

/**
 * Writes events of one type for the organization in `db`'s transaction: one outbox row each, with a
 * delivery and a job for every enabled endpoint that wants it (none written when no endpoint does).
 * Pass the transaction of the change that causes them.
 */
export async function emitEvents(
  db: Db,
  orgId: number,
  type: EventType,
  data: readonly unknown[],
  at: Date,
): Promise<void> {
  if (!data.length) return;
  await db.raw('select webhook_emit(?, ?, ?::json, ?, ?)', [
    orgId,
    type,
    JSON.stringify(data),
    at,
    NOTICE_TYPES.has(type),
  ]);
}

export function emitEvent(db: Db, orgId: number, type: EventType, data: unknown, at: Date): Promise<void> {
  return emitEvents(db, orgId, type, [data], at);
}

/** The `webhook-id` of an event: the same for every attempt and every endpoint. */
export function messageId(eventUlid: string): string {
  return `msg_${eventUlid}`;
}

interface WalletData {
  currency: string;
  balance_minor: number;
  low_balance_threshold_minor: number;
}

/**
 * The data as sent. Events written in SQL (admission) carry money in minor units; it is rendered
 * here like the API renders it, so the wallet's rule stays in one place.
 */
function renderData(type: string, data: unknown): unknown {
  if (type === 'wallet.low_balance') {
    const w = data as WalletData;
    return {
      balance: formatMinor(w.balance_minor, w.currency),
      low_balance_threshold: formatMinor(w.low_balance_threshold_minor, w.currency),
      currency: w.currency,
    };
  }
  return data;
}

/** The JSON body of a delivery (Standard Webhooks: type, timestamp of the event, data). */
export function eventBody(event: { type: string; data: unknown; created_at: Date }): string {
  return JSON.stringify({
    type: event.type,
    timestamp: event.created_at.toISOString(),
    data: renderData(event.type, event.data),
  });
}
