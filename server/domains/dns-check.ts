// Ownership check of a custom domain: a TXT lookup through the configured resolvers
// (DNS_RESOLVERS, `ip` or `ip:port`; empty: the system's). The answer says why a check failed.
import { Resolver } from 'node:dns/promises';

/** `transient`: the lookup itself failed (timeout, SERVFAIL), so the record may well be there. */
export type TxtCheck = { matched: true } | { matched: false; reason: string; transient?: boolean };

function makeResolver(servers: readonly string[]): Resolver {
  // Two tries of 2 s each keep a PATCH with verify=true well under a client's patience.
  const resolver = new Resolver({ timeout: 2000, tries: 2 });
  if (servers.length) resolver.setServers([...servers]);
  return resolver;
}

/** Whether any TXT record at `name` equals `expected` (a record's strings are joined, RFC 7208 style). */
export async function checkTxt(servers: readonly string[], name: string, expected: string): Promise<TxtCheck> {
  let records: string[][];
  try {
    records = await makeResolver(servers).resolveTxt(name);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'EUNKNOWN';
    if (code === 'ENOTFOUND' || code === 'ENODATA') {
      return { matched: false, reason: `No TXT record found at ${name}.` };
    }
    return { matched: false, reason: `The DNS lookup of ${name} failed (${code}); try again later.`, transient: true };
  }
  const values = records.map((chunks) => chunks.join('').trim());
  if (values.includes(expected)) return { matched: true };
  if (!values.length) return { matched: false, reason: `No TXT record found at ${name}.` };
  return {
    matched: false,
    reason: `The TXT records at ${name} do not contain the expected value (found ${values.length} other record${values.length === 1 ? '' : 's'}).`,
  };
}
