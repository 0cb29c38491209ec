import { ABILITIES } from '../auth/abilities.js';
import { defineOperation } from '../operations/operation.js';
import { listEnvelope } from '../schemas/common.js';
import { ApiToken, CreatedTokenBody, TokenAbilities, createTokenBody, tokenIdParams } from './schema.js';
import { createTokenAsCaller, listTokens, revokeToken } from './service.js';

// GET /v1/tokens/abilities
const tokenAbilities = defineOperation({
  id: 'tokens.abilities',
  method: 'GET',
  path: '/v1/tokens/abilities',
  summary: 'Abilities the caller may grant, and the full catalog',
  tag: 'Tokens',
  ability: 'api.tokens.manage',
  billable: false,
  response: {
    status: 200,
    description: 'Assignable abilities and the catalog (no data envelope).',
    schema: TokenAbilities,
  },
  jsonRead: true,
  handler: async ({ principal }) => ({
    status: 200,
    body: { assignable: ABILITIES.filter((a) => principal.abilities.has(a)), all: [...ABILITIES] },
  }),
});

// GET /v1/tokens
const tokensList = defineOperation({
  id: 'tokens.list',
  method: 'GET',
  path: '/v1/tokens',
  summary: 'Tokens of the authenticated user in this organization',
  tag: 'Tokens',
  ability: 'api.tokens.manage',
  billable: false,
  response: {
    status: 200,
    description: 'The tokens, oldest first; revoked tokens are left out.',
    schema: listEnvelope(ApiToken),
  },
  handler: async ({ app, principal }) => ({
    status: 200,
    body: { data: await listTokens(app.db, principal.org, principal.token.userId) },
  }),
});

// POST /v1/tokens
const tokensCreate = defineOperation<
  Record<string, never>,
  Record<string, never>,
  { name: string; abilities: string[]; expires_at?: string | null }
>({
  id: 'tokens.create',
  method: 'POST',
  path: '/v1/tokens',
  summary: 'Create a token; the secret is returned once',
  tag: 'Tokens',
  ability: 'api.tokens.manage',
  billable: false,
  body: createTokenBody,
  response: { status: 201, description: 'The secret and the token.', schema: CreatedTokenBody },
  handler: async ({ app, principal }, { body }) => {
    const created = await createTokenAsCaller(
      app,
      principal.org,
      { userId: principal.token.userId, abilities: principal.abilities },
      { name: body.name, abilities: body.abilities, expiresAt: body.expires_at ? new Date(body.expires_at) : null },
    );
    return { status: 201, body: { token: created.secret, data: created.token } };
  },
});

// DELETE /v1/tokens/{token_id}
const tokensDelete = defineOperation<{ token_id: number }>({
  id: 'tokens.delete',
  method: 'DELETE',
  path: '/v1/tokens/{token_id}',
  summary: 'Revoke a token',
  tag: 'Tokens',
  ability: 'api.tokens.manage',
  billable: false,
  params: tokenIdParams,
  response: { status: 204, description: 'Revoked.' },
  description:
    'A token may revoke only tokens whose abilities it holds itself (a `*` token: tokens of any abilities), ' +
    'and always itself; others answer 403. Revoked tokens answer 401 from then on.',
  errors: [404],
  handler: async ({ app, principal }, { params }) => {
    await revokeToken(
      app,
      principal.org,
      { userId: principal.token.userId, tokenId: principal.token.id, abilities: principal.abilities },
      params.token_id,
    );
    return { status: 204 };
  },
});

export const tokenOperations = [tokenAbilities, tokensList, tokensCreate, tokensDelete];
