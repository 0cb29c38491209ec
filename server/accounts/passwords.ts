// Dashboard account passwords, hashed with argon2id (@node-rs/argon2: MIT, the Rust argon2 crate
// as a prebuilt N-API binary per platform, no install script) at OWASP's recommended minimum:
// 19 MiB of memory, 2 passes, 1 lane. Code passwords on the redirect side keep their own scrypt
// hashes (server/qr-codes/password.ts): they guard a link, not an account.
import { Algorithm, hash, verify } from '@node-rs/argon2';

const PASSWORD_MIN_LENGTH = 10;
const PASSWORD_MAX_LENGTH = 200;

const OPTIONS = { algorithm: Algorithm.Argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 };

/** The rule a new password must meet, or null when it does. */
export function passwordProblem(password: string): string | null {
  if ([...password].length < PASSWORD_MIN_LENGTH) return `Must be at least ${PASSWORD_MIN_LENGTH} characters.`;
  if ([...password].length > PASSWORD_MAX_LENGTH) return `Must be at most ${PASSWORD_MAX_LENGTH} characters.`;
  return null;
}

export function hashAccountPassword(password: string): Promise<string> {
  return hash(password, OPTIONS);
}

let dummy: Promise<string> | undefined;

/**
 * Whether the password matches the stored hash. A user without a password (or no user at all)
 * is checked against a throwaway hash, so the answer takes as long either way and timing does not
 * tell which emails have accounts.
 */
export async function verifyAccountPassword(stored: string | null, password: string): Promise<boolean> {
  if (!stored) {
    dummy ??= hashAccountPassword('not a password of anyone');
    await verify(await dummy, password);
    return false;
  }
  try {
    return await verify(stored, password);
  } catch {
    return false;
  }
}
