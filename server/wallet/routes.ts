import { defineOperation } from '../operations/operation.js';
import { dataEnvelope } from '../schemas/common.js';
import { Wallet, walletQuery } from './schema.js';
import { readWallet } from './service.js';

// GET /v1/wallet
export const walletRead = defineOperation<Record<string, never>, { page: number; per_page: number }>({
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

export const walletOperations = [walletRead];
