import { defineOperation } from '../operations/operation.js';
import { dataEnvelope } from '../schemas/common.js';
import { ApiError } from '../errors.js';
import { parseAmount } from './money.js';
import { Wallet, walletQuery, walletSettingsBody } from './schema.js';
import { readWallet, setLowBalanceThreshold } from './service.js';

// GET /v1/wallet
const walletRead = defineOperation<Record<string, never>, { page: number; per_page: number }>({
  id: 'wallet.read',
  method: 'GET',
  path: '/v1/wallet',
  summary: 'Wallet balance and ledger, newest transactions first',
  tag: 'Wallet',
  ability: 'wallet.view',
  billable: false,
  query: walletQuery,
  response: { status: 200, description: 'The wallet with a page of transactions.', schema: dataEnvelope(Wallet) },
  handler: async ({ app, principal }, { query }) => ({
    status: 200,
    body: { data: await readWallet(app, principal.org, query.page, query.per_page) },
  }),
});

// PATCH /wallet/settings (dashboard only: billing writes are not part of the API)
export const walletSettingsUpdate = defineOperation<
  Record<string, never>,
  Record<string, never>,
  { low_balance_threshold: string | null }
>({
  id: 'wallet.settings',
  method: 'PATCH',
  path: '/wallet/settings',
  summary: 'Set the low-balance threshold',
  tag: 'Wallet',
  ability: 'wallet.manage',
  billable: false,
  body: walletSettingsBody,
  response: {
    status: 200,
    description: 'The wallet with its first page of transactions.',
    schema: dataEnvelope(Wallet),
  },
  handler: async ({ app, principal }, { body }) => {
    const org = principal.org;
    let minor: number | null = null;
    if (body.low_balance_threshold !== null) {
      minor = parseAmount(body.low_balance_threshold, org.currency);
      if (minor === null) {
        throw ApiError.field(
          'low_balance_threshold',
          `Must be an amount with at most the decimals of ${org.currency}.`,
        );
      }
    }
    await setLowBalanceThreshold(app, org, minor);
    return { status: 200, body: { data: await readWallet(app, org, 1, 25) } };
  },
});

export const walletOperations = [walletRead];
