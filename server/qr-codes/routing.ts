// The redirect decision: which answer a scan gets and where it goes. Pure functions of the code's
// stored settings, the visitor's facts and the time, so every edge is unit-testable.
import crypto from 'node:crypto';
import { httpUrlOrNull } from '../schemas/http-url.js';

/** The facts about a visitor that routing conditions look at. */
export interface Visitor {
  /** mobile, tablet, desktop, bot or other. */
  device: string;
  /** Operating system name as the user-agent parser gives it ('iOS', 'Mac OS', 'Windows'), '' unknown. */
  os: string;
  /** ISO 3166 alpha-2, upper case, '' unknown. */
  country: string;
  /** Primary tag of Accept-Language, lower case, '' none. */
  language: string;
  /** Keyed hash of ip + user agent, decimal UInt64; seeds the A/B split so it is stable per visitor. */
  visitorHash: string;
}

/** The code settings the decision needs (a subset of a qr_codes row, JSON columns parsed). */
export interface CodeSettings {
  id: number;
  status: string;
  destination: unknown;
  routing: unknown;
  schedule: unknown;
  dateBegin: Date | null;
  expireAt: Date | null;
  utmParams: unknown;
}

export type Decision =
  | { kind: 'redirect'; url: string; matchedRule: number }
  | { kind: 'not_found' }
  | { kind: 'gone'; reason: 'not_started' | 'expired' | 'outside_schedule' | 'no_destination' };

// ---------------------------------------------------------------------------------------------
// Parsing the stored JSON. The API validates on write; the redirect still reads defensively, since a
// bad row must answer a page, never throw on the hot path.

export interface Variant {
  destination: string;
  weight: number;
}

export interface Rule {
  device: string[] | null;
  os: string[] | null;
  country: string[] | null;
  language: string[] | null;
  destination: string | null;
  variants: Variant[] | null;
}

interface ScheduleWindow {
  /** ISO weekdays, 1 = Monday … 7 = Sunday. */
  days: number[];
  /** Minutes since midnight, start inclusive, end exclusive; end <= start spans midnight. */
  start: number;
  end: number;
}

export interface Schedule {
  enabled: boolean;
  timezone: string;
  windows: ScheduleWindow[];
  fallback: string | null;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * A destination is a URL string or an object with a url key, normalised as the API stores it
 * (server/schemas/http-url.ts); anything else, or a URL that cannot be sent, is null.
 */
function destinationUrl(v: unknown): string | null {
  return httpUrlOrNull(isObject(v) ? v.url : v);
}

function stringList(v: unknown, normalise: (s: string) => string): string[] | null {
  if (v === undefined || v === null) return null;
  const list = (Array.isArray(v) ? v : [v]).filter((x): x is string => typeof x === 'string').map(normalise);
  return list.length ? list : null;
}

/** 'Mac OS' and 'macos' and 'mac-os' compare equal. */
function normaliseOs(s: string): string {
  const k = s.toLowerCase().replace(/[^a-z0-9]/g, '');
  return k === 'osx' || k === 'macosx' ? 'macos' : k;
}

const lower = (s: string): string => s.trim().toLowerCase();
const primaryLanguage = (s: string): string => lower(s).split(/[-_]/)[0];

export function parseRules(routing: unknown): Rule[] {
  if (!isObject(routing) || !Array.isArray(routing.rules)) return [];
  return routing.rules.map((r): Rule => {
    const rule = isObject(r) ? r : {};
    // Conditions live under `conditions`; keys at the rule's top level are accepted too.
    const c = isObject(rule.conditions) ? rule.conditions : rule;
    const variants = Array.isArray(rule.variants)
      ? rule.variants
          .map((v) =>
            isObject(v) ? { destination: destinationUrl(v.destination ?? v.url), weight: Number(v.weight ?? 1) } : null,
          )
          .filter((v): v is Variant => !!v && !!v.destination && Number.isFinite(v.weight) && v.weight > 0)
      : [];
    return {
      device: stringList(c.device ?? c.devices, lower),
      os: stringList(c.os, normaliseOs),
      country: stringList(c.country ?? c.countries, (s) => s.trim().toUpperCase()),
      language: stringList(c.language ?? c.languages, primaryLanguage),
      destination: destinationUrl(rule.destination),
      variants: variants.length ? variants : null,
    };
  });
}

const DAY_NAMES: Record<string, number> = {
  mon: 1,
  monday: 1,
  tue: 2,
  tuesday: 2,
  wed: 3,
  wednesday: 3,
  thu: 4,
  thursday: 4,
  fri: 5,
  friday: 5,
  sat: 6,
  saturday: 6,
  sun: 7,
  sunday: 7,
};

function parseDay(d: unknown): number | null {
  if (typeof d === 'number') return d === 0 ? 7 : d >= 1 && d <= 7 ? d : null; // 0 = Sunday too
  if (typeof d === 'string') return DAY_NAMES[d.trim().toLowerCase()] ?? null;
  return null;
}

function parseTime(t: unknown): number | null {
  if (typeof t !== 'string') return null;
  const m = /^(\d{1,2}):(\d{2})$/.exec(t.trim());
  if (!m) return null;
  const minutes = Number(m[1]) * 60 + Number(m[2]);
  return Number(m[2]) < 60 && minutes <= 24 * 60 ? minutes : null;
}

export function parseSchedule(schedule: unknown): Schedule | null {
  if (!isObject(schedule) || schedule.enabled !== true) return null;
  const windows = (Array.isArray(schedule.windows) ? schedule.windows : [])
    .map((w): ScheduleWindow | null => {
      if (!isObject(w)) return null;
      const days = (Array.isArray(w.days) ? w.days : [1, 2, 3, 4, 5, 6, 7])
        .map(parseDay)
        .filter((d): d is number => d !== null);
      const start = parseTime(w.start ?? w.from);
      const end = parseTime(w.end ?? w.to);
      return start === null || end === null || !days.length ? null : { days, start, end };
    })
    .filter((w): w is ScheduleWindow => w !== null);
  const timezone =
    typeof schedule.timezone === 'string' && validTimeZone(schedule.timezone) ? schedule.timezone : 'UTC';
  const fallback = destinationUrl(schedule.fallback_destination ?? schedule.fallback_url ?? schedule.fallback);
  return { enabled: true, timezone, windows, fallback };
}

// ---------------------------------------------------------------------------------------------
// Time zones, through Intl (formatters are costly to build, so they are kept per zone).

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      weekday: 'short',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

export function validTimeZone(tz: string): boolean {
  try {
    formatter(tz);
    return true;
  } catch {
    return false;
  }
}

/** The ISO weekday (1 = Monday) and minute of the day of an instant, in a time zone. */
export function localWeekMinute(at: Date, timeZone: string): { day: number; minute: number } {
  let day = 0;
  let hour = 0;
  let minute = 0;
  for (const p of formatter(timeZone).formatToParts(at)) {
    if (p.type === 'weekday') day = DAY_NAMES[p.value.toLowerCase()];
    else if (p.type === 'hour') hour = Number(p.value) % 24;
    else if (p.type === 'minute') minute = Number(p.value);
  }
  return { day, minute: hour * 60 + minute };
}

/** Whether an instant falls inside one of the schedule's weekly windows. */
export function inSchedule(schedule: Schedule, at: Date): boolean {
  const { day, minute } = localWeekMinute(at, schedule.timezone);
  const yesterday = day === 1 ? 7 : day - 1;
  return schedule.windows.some((w) => {
    if (w.end > w.start) return w.days.includes(day) && minute >= w.start && minute < w.end;
    // Spans midnight: the evening part belongs to the listed day, the morning part to the next.
    return (w.days.includes(day) && minute >= w.start) || (w.days.includes(yesterday) && minute < w.end);
  });
}

// ---------------------------------------------------------------------------------------------
// Rules and the A/B split.

function listMatches(want: string[] | null, have: string): boolean {
  return want === null || (have !== '' && want.includes(have));
}

function ruleMatches(rule: Rule, v: Visitor): boolean {
  return (
    listMatches(rule.device, v.device) &&
    listMatches(rule.os, normaliseOs(v.os)) &&
    listMatches(rule.country, v.country) &&
    listMatches(rule.language, v.language)
  );
}

/** A number in [0, 1) fixed by the seed: the same visitor always lands in the same bucket. */
function bucket(seed: string): number {
  return crypto.createHash('sha256').update(seed).digest().readUInt32BE(0) / 2 ** 32;
}

export function pickVariant(variants: Variant[], seed: string): Variant {
  const total = variants.reduce((s, v) => s + v.weight, 0);
  let point = bucket(seed) * total;
  for (const v of variants) {
    if (point < v.weight) return v;
    point -= v.weight;
  }
  return variants[variants.length - 1];
}

/** The routing outcome: the first matching rule's destination (or variant), else the code's. */
export function route(
  rules: Rule[],
  fallback: string | null,
  v: Visitor,
  codeId: number,
): { url: string | null; matchedRule: number } {
  for (let i = 0; i < rules.length; i++) {
    const rule = rules[i];
    if (!ruleMatches(rule, v)) continue;
    if (rule.variants)
      return { url: pickVariant(rule.variants, `${codeId}:${i}:${v.visitorHash}`).destination, matchedRule: i };
    if (rule.destination) return { url: rule.destination, matchedRule: i };
  }
  return { url: fallback, matchedRule: -1 };
}

// ---------------------------------------------------------------------------------------------
// UTM parameters: appended, never replacing a key the destination already carries.

export function appendUtm(url: string, utm: unknown): string {
  if (!isObject(utm)) return url;
  const pairs: [string, string][] = [];
  for (const [k, v] of Object.entries(utm)) {
    if (v === null || v === undefined || v === '' || typeof v === 'object') continue;
    pairs.push([k.startsWith('utm_') ? k : `utm_${k}`, String(v)]);
  }
  return appendParams(url, pairs);
}

/** The scan's id for the destination's owner (conversion_tracking): `qr_scan=<scan id>`. */
export function appendScanId(url: string, scanId: string): string {
  return appendParams(url, [['qr_scan', scanId]]);
}

/** Query parameters appended before the fragment, never replacing a key the URL already carries. */
function appendParams(url: string, pairs: [string, string][]): string {
  const hashAt = url.indexOf('#');
  const base = hashAt === -1 ? url : url.slice(0, hashAt);
  const hash = hashAt === -1 ? '' : url.slice(hashAt);
  const queryAt = base.indexOf('?');
  const existing = new Set(queryAt === -1 ? [] : [...new URLSearchParams(base.slice(queryAt + 1)).keys()]);
  const extra: string[] = [];
  for (const [key, v] of pairs) {
    if (existing.has(key)) continue;
    existing.add(key);
    extra.push(`${encodeURIComponent(key)}=${encodeURIComponent(v)}`);
  }
  if (!extra.length) return url;
  const sep = queryAt === -1 ? '?' : base.endsWith('?') || base.endsWith('&') ? '' : '&';
  return `${base}${sep}${extra.join('&')}${hash}`;
}

// ---------------------------------------------------------------------------------------------

/** A code's stored JSON read once (the redirect caches it with the code). */
export interface ParsedCode {
  rules: Rule[];
  schedule: Schedule | null;
  destination: string | null;
}

export function parseCode(code: Pick<CodeSettings, 'routing' | 'schedule' | 'destination'>): ParsedCode {
  return {
    rules: parseRules(code.routing),
    schedule: parseSchedule(code.schedule),
    destination: destinationUrl(code.destination),
  };
}

/**
 * Status and dates first (404, 410), then the schedule (outside every window: its fallback, or 410
 * without one), then the routing rules, then UTM parameters. The redirect cap and the password are
 * checked by the listener, since they need the counters and the request.
 */
export function decide(code: CodeSettings, v: Visitor, now: Date, parsed: ParsedCode = parseCode(code)): Decision {
  if (code.status !== 'active') return { kind: 'not_found' };
  if (code.dateBegin && now < code.dateBegin) return { kind: 'gone', reason: 'not_started' };
  if (code.expireAt && now >= code.expireAt) return { kind: 'gone', reason: 'expired' };
  const schedule = parsed.schedule;
  if (schedule && !inSchedule(schedule, now)) {
    if (!schedule.fallback) return { kind: 'gone', reason: 'outside_schedule' };
    return { kind: 'redirect', url: appendUtm(schedule.fallback, code.utmParams), matchedRule: -1 };
  }
  const { url, matchedRule } = route(parsed.rules, parsed.destination, v, code.id);
  if (!url) return { kind: 'gone', reason: 'no_destination' };
  return { kind: 'redirect', url: appendUtm(url, code.utmParams), matchedRule };
}
