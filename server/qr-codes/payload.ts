// The text a code's QR symbol encodes: its public_url for dynamic types, the payload itself for
// static types, written as the de-facto standards that phone cameras read:
// - wifi: `WIFI:T:<WPA|WEP|nopass>;S:<ssid>;P:<password>;H:true;;` with `\ ; , : "` escaped by a
//   backslash (the format ZXing defined and Android and iOS cameras read);
// - email: a `mailto:` URI (RFC 6068) with subject and body percent-encoded;
// - sms: `SMSTO:<number>:<body>`; phone: a `tel:` URI (RFC 3966); geo: `geo:<lat>,<lon>` (RFC 5870);
// - text: the text as is.
// Pure functions; the destination was validated against its type's schema when stored.
import { isStaticType, type StaticType, type WifiData } from './types.js';

type Obj = Record<string, unknown>;
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Escapes the characters the WIFI: format reserves: backslash, semicolon, comma, colon, double quote. */
function wifiEscape(s: string): string {
  return s.replace(/[\\;,:"]/g, (c) => `\\${c}`);
}

function wifiPayload(d: WifiData): string {
  const t = d.encryption ?? 'WPA';
  let out = `WIFI:T:${t};S:${wifiEscape(d.ssid)};`;
  if (t !== 'nopass' && d.password) out += `P:${wifiEscape(d.password)};`;
  if (d.hidden) out += 'H:true;';
  return `${out};`;
}

/** RFC 6068: hfvalues percent-encoded as UTF-8; line breaks in a body as %0D%0A. */
function mailtoValue(s: string): string {
  return encodeURIComponent(s.replace(/\r?\n/g, '\r\n'));
}

function mailtoPayload(d: { to: string; subject?: string; body?: string }): string {
  // The address: percent-encode what RFC 6068 reserves in a mailto `to` (everything but unreserved,
  // `@` and the sub-delims an address may hold).
  const to = encodeURIComponent(d.to).replace(/%40/g, '@');
  const fields: string[] = [];
  if (d.subject) fields.push(`subject=${mailtoValue(d.subject)}`);
  if (d.body) fields.push(`body=${mailtoValue(d.body)}`);
  return `mailto:${to}${fields.length ? `?${fields.join('&')}` : ''}`;
}

/** A number as RFC 3966 writes it: digits, an optional leading +, and the visual separators - . ( ). */
export function telNumber(n: string): string {
  return n.replace(/[\s/]+/g, '');
}

function smsPayload(d: { number: string; body?: string }): string {
  return `SMSTO:${telNumber(d.number)}:${d.body ?? ''}`;
}

/** A coordinate in plain decimal notation (never 1e-7), at most 7 decimals (about 1 cm). */
function coordinate(x: number): string {
  const s = x.toFixed(7).replace(/\.?0+$/, '');
  return s === '-0' ? '0' : s;
}

export function staticPayload(type: StaticType, destination: unknown): string {
  const d = (typeof destination === 'object' && destination !== null ? destination : {}) as Obj;
  switch (type) {
    case 'wifi':
      return wifiPayload(d as unknown as WifiData);
    case 'text':
      return str(d.text);
    case 'email':
      return mailtoPayload({ to: str(d.to), subject: str(d.subject), body: str(d.body) });
    case 'sms':
      return smsPayload({ number: str(d.number), body: str(d.body) });
    case 'phone':
      return `tel:${telNumber(str(d.number))}`;
    case 'geo':
      return `geo:${coordinate(Number(d.latitude))},${coordinate(Number(d.longitude))}`;
  }
}

/** What the QR symbol of a code encodes: the payload of a static type, else the public URL. */
export function encodedText(type: string, destination: unknown, publicUrl: string): string {
  return isStaticType(type) ? staticPayload(type, destination) : publicUrl;
}
