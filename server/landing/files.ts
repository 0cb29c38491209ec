// The files a landing page offers: a contact as vCard 4.0 (RFC 6350) and an event as iCalendar
// (RFC 5545). Written with well-kept libraries, vcard4 (ISC: escaping, compound values) and
// ical-generator (MIT), never by string concatenation; tests parse them back with ical.js, a
// third implementation.
import ical from 'ical-generator';
import {
  AdrProperty,
  EmailProperty,
  FNProperty,
  NoteProperty,
  NProperty,
  OrgProperty,
  ParameterValueType,
  PhotoProperty,
  SpecialValueType,
  TelProperty,
  TextType,
  TitleProperty,
  TypeParameter,
  URIType,
  URLProperty,
  VCARD,
} from 'vcard4';
import type { EventData, VcardData } from '../qr-codes/types.js';
import { telNumber } from '../qr-codes/payload.js';

const opt = (s: string | undefined): TextType | undefined => (s ? new TextType(s) : undefined);

/**
 * Folds content lines at 75 octets (RFC 6350 3.2, RFC 5545 3.1), never inside a UTF-8 sequence:
 * the libraries fold by characters, which lets a line of accented text run past 75 octets.
 */
function foldLines(text: string): string {
  const unfolded = text.replace(/\r\n[ \t]/g, '');
  const out: string[] = [];
  for (const line of unfolded.split('\r\n')) {
    if (Buffer.byteLength(line) <= 75) {
      out.push(line);
      continue;
    }
    let current = '';
    let bytes = 0;
    let limit = 75;
    for (const ch of line) {
      const n = Buffer.byteLength(ch);
      if (bytes + n > limit) {
        out.push(current);
        current = ' ';
        bytes = 1;
        limit = 75;
      }
      current += ch;
      bytes += n;
    }
    out.push(current);
  }
  return out.join('\r\n');
}

/** The contact as a vCard 4.0 file. */
export function vcardFile(d: VcardData): string {
  const props: unknown[] = [new FNProperty([], new TextType(d.name))];
  if (d.given_name || d.family_name) {
    props.push(
      new NProperty(
        [],
        new SpecialValueType('nproperty', [opt(d.family_name), opt(d.given_name), undefined, undefined, undefined]),
      ),
    );
  }
  if (d.organization)
    props.push(new OrgProperty([], new SpecialValueType('orgproperty', [new TextType(d.organization)])));
  if (d.title) props.push(new TitleProperty([], new TextType(d.title)));
  for (const p of d.phones ?? []) {
    const params = p.type ? [new TypeParameter('telproperty', new ParameterValueType(p.type))] : [];
    props.push(new TelProperty(params, new URIType(`tel:${telNumber(p.number)}`)));
  }
  for (const e of d.emails ?? []) {
    const params = e.type ? [new TypeParameter('emailproperty', new ParameterValueType(e.type))] : [];
    props.push(new EmailProperty(params, new TextType(e.address)));
  }
  if (d.website) props.push(new URLProperty([], new URIType(d.website)));
  if (d.address) {
    const a = d.address;
    props.push(
      new AdrProperty(
        [],
        new SpecialValueType('adrproperty', [
          undefined,
          undefined,
          opt(a.street),
          opt(a.city),
          opt(a.region),
          opt(a.postal_code),
          opt(a.country),
        ]),
      ),
    );
  }
  if (d.note) props.push(new NoteProperty([], new TextType(d.note)));
  if (d.photo) props.push(new PhotoProperty([], new URIType(d.photo)));
  return foldLines(new VCARD(props as ConstructorParameters<typeof VCARD>[0]).repr());
}

/** The UTC instant of a local date-time in an IANA time zone (the later one across a DST gap). */
export function zonedTimeToUtc(local: string, timeZone: string): Date {
  const [date, time] = local.split('T');
  const [y, m, d] = date.split('-').map(Number);
  const [hh, mm, ss] = time.split(':').map(Number);
  const wanted = Date.UTC(y, m - 1, d, hh, mm, ss || 0);
  const fmt = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  });
  const offsetAt = (t: number): number => {
    const p = Object.fromEntries(fmt.formatToParts(new Date(t)).map((x) => [x.type, x.value]));
    return Date.UTC(+p.year, +p.month - 1, +p.day, +p.hour, +p.minute, +p.second) - t;
  };
  // Two rounds settle on the offset in force at the instant itself.
  let t = wanted - offsetAt(wanted);
  t = wanted - offsetAt(t);
  return new Date(t);
}

/** The event as an iCalendar file with one VEVENT, its times in UTC (valid without a VTIMEZONE). */
export function icsFile(d: EventData, uid: string, now: Date): string {
  const cal = ical({ prodId: { company: 'qr-service', product: 'landing-page', language: 'EN' } });
  cal.createEvent({
    id: uid,
    stamp: now,
    start: zonedTimeToUtc(d.start, d.timezone),
    end: zonedTimeToUtc(d.end, d.timezone),
    summary: d.title,
    description: d.description,
    location: d.location,
    url: d.url,
  });
  return foldLines(cal.toString());
}
