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
/** The random part of the last id, as two halves of 40 bits (8 characters each), most significant first. */
let high = 0;
let low = 0;
const HALF = 2 ** 40;

/** The next 40 random bits of the pool, as a number. */
function random40(): number {
  if (offset + 5 > pool.length) {
    pool = crypto.randomBytes(POOL_SIZE);
    offset = 0;
  }
  const n = pool[offset] * 2 ** 32 + pool.readUInt32BE(offset + 1);
  offset += 5;
  return n;
}

/**
 * A ULID of the millisecond `now`. Within one millisecond the ids of this process increase: the
 * next one is the last one plus a random step of 1 to 2^40 - 1 (the ULID spec's monotonic mode
 * steps by 1; a random step keeps the order without making the next id guessable from the last,
 * since scan ids travel in URLs: a pixel page's consent answer carries its scan's id). So two
 * scans or actions answered in the same millisecond keep their order in the raw export and the live
 * stream. A new millisecond, forwards or backwards, draws a fresh random part.
 */
export function fastUlid(now: number = Date.now()): string {
  if (now !== lastMs || !step()) {
    let t = now;
    for (let i = 9; i >= 0; i--) {
      out[i] = CODES[t % 32];
      t = Math.floor(t / 32);
    }
    lastMs = now;
    high = random40();
    low = random40();
  }
  writeHalf(high, 17);
  writeHalf(low, 25);
  return out.toString('latin1', 0, 26);
}

/**
 * The random part plus a random step of 1 to 2^40 - 1; false when that ran past its largest value
 * (about once in 2^40 milliseconds with an id in each), and the part is then drawn afresh.
 */
function step(): boolean {
  low += 1 + (random40() % (HALF - 1));
  if (low >= HALF) {
    low -= HALF;
    high += 1;
  }
  return high < HALF;
}

/** 40 bits as 8 characters of 5 bits, most significant first, ending at `last`. */
function writeHalf(n: number, last: number): void {
  for (let i = last; i > last - 8; i--) {
    out[i] = CODES[n % 32];
    n = Math.floor(n / 32);
  }
}
