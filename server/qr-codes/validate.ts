// Checks on QR code input that JSON Schema cannot express: URLs that really parse (one rule,
// server/schemas/http-url.ts; the URL checks return the input with its URLs normalised, the form that
// is stored and served), IANA time zones, schedule windows and routing rules that the redirect's
// evaluator (./routing.ts) reads exactly as stored, and the order of date_begin and expire_at. Pure
// functions: they add field errors and never touch the database.
import type { FieldErrors } from '../errors.js';
import { validTimeZone } from './routing.js';
import { normaliseHttpUrl } from '../schemas/http-url.js';
import { SLUG_PATTERN } from './schema.js';
import { isStaticType, type CodeType } from './types.js';
import { attributeProblem, normaliseGtin } from './gs1.js';
import { checkLinks, isGtinLevel, type Gs1Link } from './gs1-links.js';

const SLUG_RE = new RegExp(SLUG_PATTERN);

export function addError(errors: FieldErrors, field: string, message: string): void {
  const list = (errors[field] ??= []);
  if (!list.includes(message)) list.push(message);
}

/**
 * Checks one URL field (server/schemas/http-url.ts): its normalised form, or undefined with the
 * problem added to the field's errors.
 */
function checkUrl(errors: FieldErrors, field: string, value: unknown): string | undefined {
  const check = normaliseHttpUrl(value);
  if (check.ok) return check.url;
  addError(errors, field, check.problem);
  return undefined;
}

export function slugProblem(value: unknown): string | null {
  if (typeof value !== 'string' || value === '') return 'This field is required.';
  return SLUG_RE.test(value) ? null : 'Must be 1 to 64 characters of A-Z, a-z, 0-9, _ and -.';
}

/**
 * A destination (a URL string or an object {url}) with its URL normalised and in the shape it was
 * given, or undefined with the problem added to the errors.
 */
export function checkDestination(
  errors: FieldErrors,
  d: unknown,
  field = 'destination',
): string | { url: string } | undefined {
  if (d === undefined || d === null) {
    addError(errors, field, 'This field is required.');
    return undefined;
  }
  if (typeof d === 'object') {
    if (Array.isArray(d) || Object.keys(d).some((k) => k !== 'url')) {
      addError(errors, field, 'Must be an http or https URL, or an object with only a url key.');
      return undefined;
    }
    const url = checkUrl(errors, `${field}.url`, (d as { url?: unknown }).url);
    return url === undefined ? undefined : { url };
  }
  return checkUrl(errors, field, d);
}

interface RuleInput {
  destination?: unknown;
  variants?: { destination?: unknown }[];
}

/**
 * Schema-valid routing: each rule needs a destination or variants (not both); URLs must parse.
 * Returns the routing with every URL normalised (the input itself when it is null or absent).
 */
export function checkRouting<R extends { rules?: RuleInput[] } | null | undefined>(errors: FieldErrors, routing: R): R {
  if (!routing) return routing;
  const rules = (routing.rules ?? []).map((rule, i) => {
    const at = `routing.rules.${i}`;
    const hasDest = rule.destination !== undefined;
    const hasVariants = rule.variants !== undefined;
    if (hasDest === hasVariants) addError(errors, at, 'A rule needs either a destination or variants.');
    const out = { ...rule };
    if (hasDest) out.destination = checkUrl(errors, `${at}.destination`, rule.destination);
    if (rule.variants) {
      out.variants = rule.variants.map((v, j) => ({
        ...v,
        destination: checkUrl(errors, `${at}.variants.${j}.destination`, v.destination),
      }));
    }
    return out;
  });
  return routing.rules ? { ...routing, rules } : routing;
}

interface ScheduleInput {
  enabled?: boolean;
  timezone?: string;
  windows?: { start: string; end: string }[];
  fallback_destination?: string | null;
}

/**
 * An enabled schedule needs a valid IANA time zone and at least one window; start != end.
 * Returns the schedule with its fallback URL normalised.
 */
export function checkSchedule<S extends ScheduleInput | null | undefined>(errors: FieldErrors, schedule: S): S {
  if (!schedule) return schedule;
  if (schedule.timezone !== undefined && !validTimeZone(schedule.timezone)) {
    addError(errors, 'schedule.timezone', 'Must be a valid IANA time zone, e.g. Europe/Berlin.');
  }
  if (schedule.enabled) {
    if (schedule.timezone === undefined)
      addError(errors, 'schedule.timezone', 'Required when the schedule is enabled.');
    if (!schedule.windows?.length)
      addError(errors, 'schedule.windows', 'An enabled schedule needs at least one window.');
  }
  (schedule.windows ?? []).forEach((w, i) => {
    if (w.start === w.end) addError(errors, `schedule.windows.${i}.end`, 'Must differ from start.');
  });
  if (schedule.fallback_destination !== undefined && schedule.fallback_destination !== null) {
    return {
      ...schedule,
      fallback_destination: checkUrl(errors, 'schedule.fallback_destination', schedule.fallback_destination),
    };
  }
  return schedule;
}

/** A date-time the schema accepted that JavaScript or Postgres cannot hold (e.g. a leap second). */
export function checkDateValue(errors: FieldErrors, field: string, value: string | null | undefined): void {
  if (value === undefined || value === null) return;
  const t = new Date(value).getTime();
  // Postgres timestamptz and JavaScript agree on years 1 to 9999.
  const year = Number.isFinite(t) ? new Date(t).getUTCFullYear() : NaN;
  if (!(year >= 1 && year <= 9999)) {
    addError(errors, field, 'Must be a valid date-time between years 1 and 9999.');
  }
}

export function checkDates(errors: FieldErrors, begin: Date | null, expire: Date | null): void {
  if (begin && expire && begin.getTime() >= expire.getTime()) {
    addError(errors, 'expire_at', 'Must be after date_begin.');
  }
}

interface UrlFields {
  destination?: unknown;
  routing?: unknown;
  schedule?: unknown;
}

/**
 * A code's input with every URL it carries normalised (destination, rule destinations, variants,
 * schedule fallback); the keys it does not give stay absent. Problems are added to the errors.
 */
export function withNormalisedUrls<T extends UrlFields>(errors: FieldErrors, input: T, type: CodeType = 'url'): T {
  const out = { ...input };
  if (input.destination !== undefined) out.destination = checkTypedDestination(errors, type, input.destination);
  if (input.routing !== undefined) out.routing = checkRouting(errors, input.routing as { rules?: RuleInput[] } | null);
  if (input.schedule !== undefined) out.schedule = checkSchedule(errors, input.schedule as ScheduleInput | null);
  return out;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A local date-time YYYY-MM-DDTHH:MM[:SS] that exists on the calendar, as minutes to compare. */
function localMinutes(s: unknown): number | null {
  if (typeof s !== 'string') return null;
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(s);
  if (!m) return null;
  const [y, mo, d, h, mi, se] = m.slice(1).map((x) => Number(x ?? 0));
  const t = Date.UTC(y, mo - 1, d, h, mi, se);
  const back = new Date(t);
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d) return null;
  return t / 60_000;
}

/**
 * The checks of a typed destination that its schema cannot say (URLs that parse, a store URL for
 * an app, a time zone and an end after the start for an event, a Wi-Fi password unless the network
 * is open), after the schema accepted it. Returns the destination with its URLs normalised.
 */
export function checkTypedDestination(errors: FieldErrors, type: CodeType, d: unknown): unknown {
  if (type === 'url') return checkDestination(errors, d);
  if (!isObj(d)) {
    addError(errors, 'destination', `Must be an object for a code of type ${type}.`);
    return undefined;
  }
  const out: Obj = { ...d };
  const url = (key: string, at = `destination.${key}`, obj: Obj = out) => {
    if (obj[key] !== undefined) obj[key] = checkUrl(errors, at, obj[key]);
  };
  switch (type) {
    case 'vcard':
      url('website');
      break;
    case 'links':
      if (Array.isArray(d.links)) {
        out.links = d.links.map((link: unknown, i) => {
          const l = { ...(link as Obj) };
          url('url', `destination.links.${i}.url`, l);
          return l;
        });
      }
      break;
    case 'app':
      for (const k of ['app_store_url', 'play_store_url', 'fallback_url']) url(k);
      if (d.app_store_url === undefined && d.play_store_url === undefined)
        addError(errors, 'destination', 'An app code needs app_store_url, play_store_url or both.');
      break;
    case 'event': {
      url('url');
      if (typeof d.timezone === 'string' && !validTimeZone(d.timezone))
        addError(errors, 'destination.timezone', 'Must be a valid IANA time zone, e.g. Europe/Berlin.');
      const start = localMinutes(d.start);
      const end = localMinutes(d.end);
      if (start === null)
        addError(errors, 'destination.start', 'Must be a date and time that exists, YYYY-MM-DDTHH:MM.');
      if (end === null) addError(errors, 'destination.end', 'Must be a date and time that exists, YYYY-MM-DDTHH:MM.');
      if (start !== null && end !== null && end <= start) addError(errors, 'destination.end', 'Must be after start.');
      break;
    }
    case 'gs1': {
      if (typeof d.gtin === 'string') {
        const g = normaliseGtin(d.gtin);
        if ('problem' in g) addError(errors, 'destination.gtin', g.problem);
        else out.gtin = g.gtin;
      }
      for (const [ai, v] of Object.entries((d.data ?? {}) as Record<string, string>)) {
        const p = attributeProblem(ai, v);
        if (p) addError(errors, `destination.data.${ai}`, p);
      }
      if (Array.isArray(d.links)) {
        const links = d.links.map((link: unknown, i) => {
          const l = { ...(link as Obj) };
          url('href', `destination.links.${i}.href`, l);
          return l as unknown as Gs1Link;
        });
        out.links = links;
        for (const [field, message] of checkLinks(links, isGtinLevel(d as { gtin: string })))
          addError(errors, field, message);
      }
      break;
    }
    case 'wifi':
      if ((d.encryption ?? 'WPA') !== 'nopass' && d.password === undefined)
        addError(errors, 'destination.password', 'Required unless encryption is nopass.');
      if (d.encryption === 'nopass' && d.password !== undefined)
        addError(errors, 'destination.password', 'An open network (encryption nopass) has no password.');
      break;
    default:
      break;
  }
  return out;
}

/** Why a code's type cannot change from one to the other, or null when it may. */
export function typeChangeProblem(from: CodeType, to: CodeType): string | null {
  if (from === to) return null;
  if (from === 'gs1' || to === 'gs1') {
    return (
      `A code cannot change to or from gs1 (${from} to ${to}): a gs1 code’s QR holds its GS1 Digital Link URI, ` +
      'not the slug’s public_url. Create a new code.'
    );
  }
  if (isStaticType(from) || isStaticType(to)) {
    return (
      `A code cannot change between a dynamic type and a static one (${from} to ${to}): a static code's QR holds ` +
      'its payload, a dynamic one its public_url, so the printed symbol would no longer match. Create a new code.'
    );
  }
  return null;
}
