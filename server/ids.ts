// ULIDs on hot paths (scan ids, request ids, admission ledger rows). The ulid package draws each
// random character through a separate getRandomValues call, which showed up at ~10% of the
// redirect's CPU and ~7% of the API's in bench profiles; this draws the 80 random bits from a
// pooled crypto buffer instead. Records created at human pace keep using the ulid package.
import crypto from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const POOL_SIZE = 10 * 512;
let pool = Buffer.alloc(0);
let offset = POOL_SIZE;

/** The alphabet's character codes. */
const CODES = Buffer.from(ALPHABET, 'latin1');
/** The ULID being made, as bytes: the time part is rewritten only when the millisecond changes. */
const out = Buffer.alloc(26);
let lastMs = -1;
/** Each alphabet character code's digit value. */
const INDEX = new Uint8Array(128);
for (let d = 0; d < 32; d++) INDEX[CODES[d]] = d;

export function fastUlid(now: number = Date.now()): string {
  // Within one millisecond the next id is the last one plus one (the ULID spec's monotonic mode),
  // so ids made in this process sort in the order they were made: two scans or actions answered in
  // the same millisecond keep their order in the raw export and the live stream.
  if (now === lastMs && increment()) return out.toString('latin1', 0, 26);
  if (now !== lastMs) {
    let t = now;
    for (let i = 9; i >= 0; i--) {
      out[i] = CODES[t % 32];
      t = Math.floor(t / 32);
    }
    lastMs = now;
  }
  if (offset + 10 > pool.length) {
    pool = crypto.randomBytes(POOL_SIZE);
    offset = 0;
  }
  // 10 random bytes = 80 bits = 16 characters of 5 bits, most significant first: two halves of
  // 40 bits (8 characters each), as numbers (exact up to 2^53).
  for (let half = 0; half < 2; half++) {
    const at = offset + 5 * half;
    let n = pool[at] * 2 ** 32 + pool.readUInt32BE(at + 1);
    for (let i = 17 + 8 * half; i >= 10 + 8 * half; i--) {
      out[i] = CODES[n % 32];
      n = Math.floor(n / 32);
    }
  }
  offset += 10;
  return out.toString('latin1', 0, 26);
}

/** The random part plus one, carrying leftwards; false when it was all Z (then it is drawn afresh). */
function increment(): boolean {
  for (let i = 25; i >= 10; i--) {
    const digit = INDEX[out[i]];
    if (digit < 31) {
      out[i] = CODES[digit + 1];
      return true;
    }
    out[i] = CODES[0];
  }
  return false;
}
