// IDNA for every hostname the service accepts (custom domains, the hosts of URL fields): UTS #46
// ToASCII (nontransitional) with its validity criteria switched on, which carry the label rules of
// RFC 5891 (section 4.2.3: no "--" in positions 3-4 of a U-label, no leading or trailing hyphen, a
// Punycode label that decodes to a valid non-ASCII label, CONTEXTJ joiners, the Bidi rule of
// RFC 5893), and no empty label; the DNS lengths are left to the caller, which says what is too long
// (see dnsLengthOk). Done by tr46 (the UTS #46
// implementation of jsdom's whatwg-url) rather than by the runtime's URL parser, whose answers differ
// between Node releases: Node 24's parser takes `xn--a.com`, which Node 20 and 22 refuse.
import { toASCII } from 'tr46';

/**
 * The ASCII form (A-labels, lowercase) of a domain name, or null when a label breaks the rules.
 * Without the STD3 ASCII rules: some hosts in URLs hold an underscore, and the custom domains'
 * stricter letters-digits-hyphens rule is checked by its caller, which names the label. A single
 * trailing dot (the DNS root) is kept.
 */
export function idnaToAscii(name: string): string | null {
  const rooted = name.endsWith('.') && name.length > 1;
  const ascii = toASCII(rooted ? name.slice(0, -1) : name, {
    checkHyphens: true,
    checkBidi: true,
    checkJoiners: true,
    useSTD3ASCIIRules: false,
    verifyDNSLength: false,
    transitionalProcessing: false,
  });
  if (ascii === null || ascii.split('.').includes('')) return null;
  return rooted ? `${ascii}.` : ascii;
}

/** Whether an ASCII domain name fits DNS: labels of 1 to 63 octets, at most 253 in all (root dot aside). */
export function dnsLengthOk(ascii: string): boolean {
  const name = ascii.endsWith('.') ? ascii.slice(0, -1) : ascii;
  return name.length > 0 && name.length <= 253 && name.split('.').every((l) => l.length > 0 && l.length <= 63);
}
