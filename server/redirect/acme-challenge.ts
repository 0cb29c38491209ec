// HTTP-01 answers on the plain-HTTP redirect listener: GET /.well-known/acme-challenge/<token> for
// a host answers the key authorization that the issuing process stored in Postgres, whichever process
// the ACME server's validation request reaches. Anything else under the prefix is a plain 404.
import type http from 'node:http';
import type { Knex } from 'knex';
import { findChallenge } from '../domains/certificate-store.js';

export const ACME_CHALLENGE_PREFIX = '/.well-known/acme-challenge/';
const TOKEN = /^[A-Za-z0-9_-]{1,256}$/;
const HEADERS = { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' };

/** The Host header without its port, lowercase. */
function bareHost(host: string): string {
  const colon = host.lastIndexOf(':');
  return (colon > 0 && !host.endsWith(']') ? host.slice(0, colon) : host).toLowerCase();
}

export async function answerAcmeChallenge(
  db: Knex,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  now: Date,
): Promise<void> {
  const url = req.url ?? '';
  const q = url.indexOf('?');
  const token = (q === -1 ? url : url.slice(0, q)).slice(ACME_CHALLENGE_PREFIX.length);
  const keyAuthorization = TOKEN.test(token)
    ? await findChallenge(db, bareHost(req.headers.host ?? ''), token, now)
    : null;
  const body = keyAuthorization ?? 'Not found\n';
  res.writeHead(keyAuthorization ? 200 : 404, { ...HEADERS, 'Content-Length': Buffer.byteLength(body) });
  res.end(req.method === 'HEAD' ? undefined : body);
}
