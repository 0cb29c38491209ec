import { ABILITIES, WILDCARD } from '../auth/abilities.js';
import { nullableDateTime, objectSchema } from '../schemas/common.js';
import type { JsonSchema } from '../schemas/validation.js';

export const ApiToken: JsonSchema = {
  $id: 'ApiToken',
  type: 'object',
  required: ['id', 'name', 'abilities'],
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    abilities: { type: 'array', items: { type: 'string' } },
    last_used_at: nullableDateTime,
    expires_at: nullableDateTime,
    created_at: nullableDateTime,
    connected_app: {
      type: ['object', 'null'],
      description:
        'Set when the token is an application connected with OAuth (an MCP client): who it is, as it says (unverified). Revoking the token disconnects it.',
      required: ['client_id', 'client_name', 'redirect_host'],
      properties: {
        client_id: { type: 'string' },
        client_name: { type: ['string', 'null'] },
        redirect_host: { type: ['string', 'null'] },
      },
    },
  },
};

export const TokenAbilities: JsonSchema = {
  $id: 'TokenAbilities',
  type: 'object',
  required: ['assignable', 'all'],
  properties: {
    assignable: { type: 'array', items: { type: 'string' } },
    all: { type: 'array', items: { type: 'string' } },
  },
};

export const CreatedTokenBody: JsonSchema = {
  type: 'object',
  required: ['token', 'data'],
  properties: {
    token: { type: 'string', description: 'The plain-text secret `<id>|<random>`, shown once.' },
    data: ApiToken,
  },
};

export const createTokenBody = objectSchema(
  'tokens.create.body',
  {
    name: { type: 'string', minLength: 1, maxLength: 255 },
    abilities: {
      type: 'array',
      minItems: 1,
      maxItems: ABILITIES.length + 1,
      uniqueItems: true,
      items: { type: 'string', enum: [WILDCARD, ...ABILITIES] },
      default: [WILDCARD],
    },
    expires_at: nullableDateTime,
  },
  ['name'],
);

export const tokenIdParams = objectSchema(
  'tokens.id.params',
  { token_id: { type: 'integer', minimum: 1, maximum: 999999999999999 } },
  ['token_id'],
);
