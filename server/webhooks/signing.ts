// Standard Webhooks signing: secrets in the `whsec_<base64>` form (kept sealed at rest with the
// service's Sealer), and the `webhook-id`, `webhook-timestamp` and `webhook-signature` headers of a
// delivery.
import crypto from 'node:crypto';

const PREFIX = 'whsec_';
const SECRET_BYTES = 32;

export function newSigningSecret(): string {
  return PREFIX + crypto.randomBytes(SECRET_BYTES).toString('base64');
}

/** The purpose a secret is sealed for (server/at-rest.ts): it opens only in its own endpoint's row. */
export function secretPurpose(endpointUlid: string): string {
  return `webhook-secret:${endpointUlid}`;
}

/** `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` with the secret's key bytes. */
function signature(secret: string, msgId: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice(PREFIX.length), 'base64');
  const mac = crypto.createHmac('sha256', key).update(`${msgId}.${timestamp}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/** The three Standard Webhooks headers; every secret given signs (rotation: new and previous). */
export function signedHeaders(
  secrets: readonly string[],
  msgId: string,
  at: Date,
  body: string,
): Record<string, string> {
  const timestamp = Math.floor(at.getTime() / 1000);
  return {
    'webhook-id': msgId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((s) => signature(s, msgId, timestamp, body)).join(' '),
  };
}
