// Checks on QR code input that JSON Schema cannot express: URLs that really parse, IANA time zones,
// schedule windows and routing rules that the redirect's evaluator (./routing.ts) reads
// exactly as stored, and the order of date_begin and expire_at. Pure functions: they return field
// errors and never touch the database.
import type { FieldErrors } from '../errors.js';
import { validTimeZone } from './routing.js';
import { MAX_URL_LENGTH, SLUG_PATTERN } from './schema.js';

const SLUG_RE = new RegExp(SLUG_PATTERN);

export function addError(errors: FieldErrors, field: string, message: string): void {
  const list = (errors[field] ??= []);
  if (!list.includes(message)) list.push(message);
}

/** null when the value is an absolute http(s) URL with a host, of at most 2048 characters. */
export function urlProblem(value: unknown): string | null {
  if (typeof value !== 'string' || value === '') return 'Must be an http or https URL.';
  if (value.length > MAX_URL_LENGTH) return `Must be at most ${MAX_URL_LENGTH} characters.`;
  if (/\s/.test(value)) return 'Must be a valid URL (no spaces).';
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    return 'Must be a valid URL.';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'Must be an http or https URL.';
  if (!parsed.hostname) return 'Must be a URL with a host.';
  return null;
}

export function slugProblem(value: unknown): string | null {
  if (typeof value !== 'string' || value === '') return 'This field is required.';
  return SLUG_RE.test(value) ? null : 'Must be 1 to 64 characters of A-Z, a-z, 0-9, _ and -.';
}

/** The destination's URL and the field an error about it belongs to. */
export function destinationParts(d: unknown, field = 'destination'): { url: unknown; field: string } {
  if (typeof d === 'object' && d !== null && !Array.isArray(d))
    return { url: (d as { url?: unknown }).url, field: `${field}.url` };
  return { url: d, field };
}

export function checkDestination(errors: FieldErrors, d: unknown, field = 'destination'): void {
  if (d === undefined || d === null) {
    addError(errors, field, 'This field is required.');
    return;
  }
  if (typeof d === 'object' && (Array.isArray(d) || Object.keys(d).some((k) => k !== 'url'))) {
    addError(errors, field, 'Must be a URL or an object with only a url key.');
    return;
  }
  const parts = destinationParts(d, field);
  const problem = urlProblem(parts.url);
  if (problem) addError(errors, parts.field, problem);
}

interface RuleInput {
  destination?: unknown;
  variants?: { destination?: unknown }[];
}

/** Schema-valid routing: each rule needs a destination or variants (not both); URLs must parse. */
export function checkRouting(errors: FieldErrors, routing: { rules?: RuleInput[] } | null | undefined): void {
  if (!routing) return;
  (routing.rules ?? []).forEach((rule, i) => {
    const at = `routing.rules.${i}`;
    const hasDest = rule.destination !== undefined;
    const hasVariants = rule.variants !== undefined;
    if (hasDest === hasVariants) addError(errors, at, 'A rule needs either a destination or variants.');
    if (hasDest) {
      const p = urlProblem(rule.destination);
      if (p) addError(errors, `${at}.destination`, p);
    }
    (rule.variants ?? []).forEach((v, j) => {
      const p = urlProblem(v.destination);
      if (p) addError(errors, `${at}.variants.${j}.destination`, p);
    });
  });
}

interface ScheduleInput {
  enabled?: boolean;
  timezone?: string;
  windows?: { start: string; end: string }[];
  fallback_destination?: string | null;
}

/** An enabled schedule needs a valid IANA time zone and at least one window; start != end. */
export function checkSchedule(errors: FieldErrors, schedule: ScheduleInput | null | undefined): void {
  if (!schedule) return;
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
    const p = urlProblem(schedule.fallback_destination);
    if (p) addError(errors, 'schedule.fallback_destination', p);
  }
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
