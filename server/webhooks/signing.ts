// Standard Webhooks signing: secrets in the `whsec_<base64>` form, kept encrypted at rest, and the
// `webhook-id`, `webhook-timestamp` and `webhook-signature` headers of a delivery.
import crypto from 'node:crypto';

const PREFIX = 'whsec_';
const SECRET_BYTES = 32;

export function newSigningSecret(): string {
  return PREFIX + crypto.randomBytes(SECRET_BYTES).toString('base64');
}

/** The AES-256-GCM key for stored secrets, derived from the service's secret key. */
function storageKey(secretKey: Buffer): Buffer {
  return crypto.createHmac('sha256', secretKey).update('webhook-signing-secrets').digest();
}

/** iv (12 bytes) + tag (16 bytes) + ciphertext. */
export function sealSecret(secretKey: Buffer, secret: string): Buffer {
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv('aes-256-gcm', storageKey(secretKey), iv);
  const text = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), text]);
}

export function openSecret(secretKey: Buffer, sealed: Buffer): string {
  const decipher = crypto.createDecipheriv('aes-256-gcm', storageKey(secretKey), sealed.subarray(0, 12));
  decipher.setAuthTag(sealed.subarray(12, 28));
  return Buffer.concat([decipher.update(sealed.subarray(28)), decipher.final()]).toString('utf8');
}

/** `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` with the secret's key bytes. */
export function signature(secret: string, msgId: string, timestamp: number, body: string): string {
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
