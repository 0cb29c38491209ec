// What every import source gives: pages of links, and for sources with a history, pages of scans of
// one link, oldest first. A page carries the cursor of the next one (null: the last), which is also
// what a failed import resumes from.

export const SOURCES = ['csv', 'shlink', 'bitly', 'kutt', 'yourls', 'dub'] as const;
export type SourceName = (typeof SOURCES)[number];

/** A field of the source's link that has no equivalent here (reported in the preview). */
export interface Unmappable {
  field: string;
  message: string;
}

export interface RoutingRuleIn {
  conditions: { device?: string[]; os?: string[]; country?: string[]; language?: string[] };
  destination: string;
}

export interface SourceLink {
  /** The source's own id of the link (its short code where it has none). */
  key: string;
  shortCode: string;
  /** The short domain's host, lower case; '' for the source's default domain. */
  domain: string;
  longUrl: string;
  title: string | null;
  tags: string[];
  createdAt: Date | null;
  validSince: Date | null;
  validUntil: Date | null;
  maxVisits: number | null;
  routing: RoutingRuleIn[];
  unmappable: Unmappable[];
  /** Scans the source reports for the link (an estimate of the history to import). */
  visits: number;
  /** A link that holds history only (Shlink's orphan visits): its code is created paused. */
  paused?: boolean;
}

export interface SourceScan {
  at: Date;
  referrer: string;
  userAgent: string;
  /** ISO 3166-1 alpha-2, upper case, or ''. */
  country: string;
  isBot?: boolean;
  /** For sources that only give totals (per day or in all): this one row stands for `count` scans. */
  count?: number;
}

export interface Page<T> {
  items: T[];
  /** The cursor of the next page; null after the last. */
  next: unknown;
}

export interface LinkRef {
  key: string;
  shortCode: string;
  domain: string;
  /** What the link listing said: its visit total and creation date. */
  visits: number;
  createdAt: Date | null;
}

export interface ImportSource {
  /** A page of links; cursor null for the first. */
  links(cursor: unknown): Promise<Page<SourceLink>>;
  /** A page of a link's scans after `since` and at or before `until`, oldest first. */
  scans?(link: LinkRef, since: Date | null, until: Date, cursor: unknown): Promise<Page<SourceScan>>;
}

/** A problem with the source itself (unreachable, refused, malformed): the import stops with it. */
export class SourceError extends Error {
  /** The HTTP status the source answered, when it answered. */
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

/** Requests an import keeps in flight to a source at most (results are still taken in order). */
export const SOURCE_REQUESTS_IN_FLIGHT = 8;
