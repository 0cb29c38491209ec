import { pageQueryProperties, type PageQuery } from '../schemas/paging.js';
import { dateTime, httpUrl, nullableDateTime, objectSchema, ulid } from '../schemas/common.js';
import type { JsonSchema } from '../schemas/validation.js';

const redirectUrl: JsonSchema = { ...httpUrl, type: ['string', 'null'] };

const DomainSettings: JsonSchema = {
  type: 'object',
  description:
    'Where the public redirect sends visitors of this domain: root_redirect for the bare host, ' +
    'not_found_redirect for an unknown path (absent or null: the default pages); https_redirect: whether ' +
    'plain-HTTP requests get a 308 to HTTPS once the domain has a certificate (absent or null: true).',
  properties: {
    root_redirect: redirectUrl,
    not_found_redirect: redirectUrl,
    https_redirect: { type: ['boolean', 'null'] },
  },
  additionalProperties: false,
};

export const Domain: JsonSchema = {
  $id: 'Domain',
  type: 'object',
  required: ['ulid', 'host', 'type', 'status'],
  properties: {
    ulid: { type: 'string' },
    host: { type: 'string', description: 'Lowercase, IDNs in punycode; a fallback host may carry a port.' },
    type: { type: 'string', enum: ['custom', 'fallback'] },
    status: {
      type: 'string',
      enum: ['pending', 'active', 'failed', 'expired', 'unverified', 'retired'],
      description:
        'pending: claimed, TXT record not verified yet; active: verified, the host is this organization’s; ' +
        'failed: another organization verified the host first; expired: not verified before ' +
        'verification.claim_expires_at; unverified: was active, its TXT record has been missing for the ' +
        'grace period; retired: a shared fallback host no longer configured (its codes still answer, new ' +
        'codes cannot use it).',
    },
    ssl_status: {
      type: 'string',
      enum: ['pending', 'issuing', 'active', 'failed'],
      description:
        'The latest certificate issuance: pending (queued), issuing (talking to the ACME server), active ' +
        '(issued), failed (ssl_error says why; retried with backoff). A certificate issued earlier keeps ' +
        'being served until ssl_expires_at whatever this says.',
    },
    ssl_expires_at: {
      ...nullableDateTime,
      description: 'Expiry of the certificate served for this host; null: none (yet). Renewed 30 days before.',
    },
    ssl_error: {
      type: ['string', 'null'],
      description: 'Why the latest certificate issuance failed; null when it did not.',
    },
    is_primary: { type: 'boolean' },
    is_shared: { type: 'boolean', description: 'True for the shared fallback hosts every organization may use.' },
    verified_at: nullableDateTime,
    verification: {
      type: 'object',
      description:
        'Custom domains: publish a TXT record named txt_record_name with the value txt_record_value, and ' +
        'point the host (CNAME) at cname_target, before claim_expires_at (null once verified). ' +
        'last_checked_at and last_error tell the outcome of the latest ownership check (last_error null ' +
        'when it matched). Empty for fallback hosts.',
      properties: {
        txt_record_name: { type: 'string' },
        txt_record_value: { type: 'string' },
        cname_target: { type: 'string' },
        claim_expires_at: nullableDateTime,
        last_checked_at: nullableDateTime,
        last_error: { type: ['string', 'null'] },
      },
    },
    settings: DomainSettings,
    created_at: dateTime,
    updated_at: dateTime,
  },
};

export interface DomainSettingsInput {
  root_redirect?: string | null;
  not_found_redirect?: string | null;
  https_redirect?: boolean | null;
}

export const createDomainBody = objectSchema(
  'domains.create.body',
  {
    host: {
      type: 'string',
      minLength: 1,
      maxLength: 1024,
      description:
        'A hostname such as qr.example.com: no scheme, port, path or IP address. IDNs are stored as punycode.',
    },
    verify: { type: 'boolean', default: false, description: 'Check the TXT record right away.' },
  },
  ['host'],
);
export interface CreateDomainBody {
  host: string;
  verify: boolean;
}

export const updateDomainBody = objectSchema('domains.update.body', {
  verify: { type: 'boolean', description: 'Re-check TXT ownership now; a match makes a pending domain active.' },
  refresh_ssl: { type: 'boolean', description: 'Queue certificate issuance again (active custom domains only).' },
  is_primary: {
    type: 'boolean',
    description: 'At most one primary domain per organization; setting one unsets the other.',
  },
  settings: { ...DomainSettings, description: 'Keys given replace the stored ones; null removes one.' },
});
export interface UpdateDomainBody {
  verify?: boolean;
  refresh_ssl?: boolean;
  is_primary?: boolean;
  settings?: DomainSettingsInput;
}

export const domainParams = objectSchema('domains.params', { domain_ulid: ulid }, ['domain_ulid']);
export interface DomainParams {
  domain_ulid: string;
}

export const listDomainsQuery = objectSchema('domains.list.query', { ...pageQueryProperties });
export type ListDomainsQuery = PageQuery;
