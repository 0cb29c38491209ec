// Hostnames of custom domains. A host is stored lowercase and in punycode (IDNs through UTS #46 with
// the label checks of RFC 5891, ../schemas/idna.ts), so equality and the unique index work on one
// spelling, and the same input gets the same answer on every Node release.
import { idnaToAscii } from '../schemas/idna.js';

export type HostResult = { ok: true; host: string } | { ok: false; message: string };

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
// The WHATWG parser reads a host whose last label is a number (decimal, octal or 0x-hex) as IPv4.
const NUMERIC_LABEL = /^(?:0x[0-9a-f]*|[0-9]+)$/;

/** Validates a hostname as sent by a client and returns its canonical form. */
export function normalizeHost(input: string): HostResult {
  if (input.length === 0) return { ok: false, message: 'The host must not be empty.' };
  if (input.length > 253 * 4) return { ok: false, message: 'The host must be at most 253 characters.' };
  if (/[\s/\\?#@:[\]%*]/.test(input)) {
    return {
      ok: false,
      message: 'The host must be a bare hostname: no scheme, port, path, query, IP address, spaces or wildcard.',
    };
  }
  if (input.endsWith('.')) return { ok: false, message: 'The host must not end with a dot.' };
  const ascii = idnaToAscii(input);
  if (!ascii) return { ok: false, message: 'The host is not a valid hostname.' };
  if (ascii.length > 253) return { ok: false, message: 'The host must be at most 253 characters.' };
  const labels = ascii.split('.');
  if (labels.length < 2) return { ok: false, message: 'The host must have at least two labels (e.g. qr.example.com).' };
  if (NUMERIC_LABEL.test(labels[labels.length - 1])) {
    return { ok: false, message: 'The host must be a hostname, not an IP address.' };
  }
  for (const label of labels) {
    if (!LABEL.test(label)) {
      return {
        ok: false,
        message: `The label "${label}" is invalid: 1 to 63 of a-z, 0-9 and inner hyphens.`,
      };
    }
  }
  return { ok: true, host: ascii };
}

/** The hostname part of a fallback origin (no scheme, no port): what a custom domain may not claim. */
export function originHostname(origin: string): string {
  return new URL(origin).hostname.toLowerCase();
}
