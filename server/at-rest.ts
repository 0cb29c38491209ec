// Secrets the service must keep but never show (the ACME account key, certificate private keys) are
// stored sealed: AES-256-GCM under a key derived (HKDF-SHA256) from SECRET_KEY, with the purpose of
// the value (e.g. `certificate:42`) as additional data, so a sealed value copied into another row does
// not open there. Layout: version byte (1) | 12-byte IV | 16-byte tag | ciphertext.
//
// Changing SECRET_KEY makes sealed values unreadable: `open` then throws SealedValueError, and the
// callers treat the value as lost (a certificate is issued again, an ACME account registered again).
import crypto from 'node:crypto';

const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const HEADER = 1 + IV_BYTES + TAG_BYTES;

export class SealedValueError extends Error {}

export class Sealer {
  private readonly key: Buffer;

  /** `secretKey` is the context's key (SHA-256 of SECRET_KEY, or the generated DATA_DIR/secret.key). */
  constructor(secretKey: Buffer) {
    this.key = Buffer.from(crypto.hkdfSync('sha256', secretKey, Buffer.alloc(0), 'qr-service at-rest v1', 32));
  }

  seal(plaintext: string | Buffer, purpose: string): Buffer {
    const iv = crypto.randomBytes(IV_BYTES);
    const cipher = crypto.createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(purpose, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), body]);
  }

  open(sealed: Buffer, purpose: string): Buffer {
    if (sealed.length < HEADER || sealed[0] !== VERSION) {
      throw new SealedValueError('The sealed value has an unknown format.');
    }
    const decipher = crypto.createDecipheriv('aes-256-gcm', this.key, sealed.subarray(1, 1 + IV_BYTES));
    decipher.setAAD(Buffer.from(purpose, 'utf8'));
    decipher.setAuthTag(sealed.subarray(1 + IV_BYTES, HEADER));
    try {
      return Buffer.concat([decipher.update(sealed.subarray(HEADER)), decipher.final()]);
    } catch {
      throw new SealedValueError('The sealed value does not open with this SECRET_KEY (changed key, or another row).');
    }
  }
}
