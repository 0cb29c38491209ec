import { dateTime, nullableDateTime, objectSchema } from '../schemas/common.js';
import type { JsonSchema } from '../schemas/validation.js';

const decimal = { type: 'string', pattern: '^-?\\d+(\\.\\d+)?$' };

const WalletTransaction: JsonSchema = {
  $id: 'WalletTransaction',
  type: 'object',
  required: ['ulid', 'type', 'amount', 'balance_after'],
  properties: {
    ulid: { type: 'string' },
    type: { type: 'string', enum: ['debit', 'credit'] },
    amount: { ...decimal, description: 'Decimal; a debit is negative.' },
    balance_after: decimal,
    reference_type: { type: ['string', 'null'] },
    created_at: nullableDateTime,
  },
};

const PageMeta: JsonSchema = {
  $id: 'PageMeta',
  type: 'object',
  required: ['current_page', 'last_page', 'per_page', 'total'],
  properties: {
    current_page: { type: 'integer' },
    last_page: { type: 'integer' },
    per_page: { type: 'integer' },
    total: { type: 'integer' },
  },
};

export const Wallet: JsonSchema = {
  $id: 'Wallet',
  type: 'object',
  required: ['balance', 'currency'],
  properties: {
    balance: decimal,
    currency: { type: 'string' },
    low_balance_threshold: { oneOf: [decimal, { type: 'null' }] },
    updated_at: dateTime,
    transactions: {
      type: 'object',
      required: ['data', 'meta'],
      properties: { data: { type: 'array', items: WalletTransaction }, meta: PageMeta },
    },
  },
};

export const walletQuery = objectSchema('wallet.read.query', {
  page: { type: 'integer', minimum: 1, maximum: 1000000, default: 1 },
  per_page: { type: 'integer', minimum: 1, maximum: 100, default: 25 },
});

export const walletSettingsBody = objectSchema(
  'wallet.settings.body',
  {
    low_balance_threshold: {
      type: ['string', 'null'],
      maxLength: 20,
      description: 'A decimal amount, or null for none.',
    },
  },
  ['low_balance_threshold'],
);
