// The IP databases a scan is enriched with: country (GeoIP mmdb) and network operator and ASN
// (ASN ranges). They are immutable files shipped in npm packages, read once per application
// context (app.geo) on first use; tests share one GeoDatabase between contexts.
//
// Data: @ip-location-db/geo-whois-asn-country-mmdb and @ip-location-db/asn, CC BY 4.0 (NRO,
// RouteViews, DB-IP); credited in docs/redirect.md.
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Reader, type CountryResponse } from 'maxmind';

const require = createRequire(import.meta.url);

// ASN ranges: sorted arrays searched by binary search (≈410k IPv4 and ≈100k IPv6 ranges).

class AsnTable {
  constructor(
    private readonly v4Start: Uint32Array,
    private readonly v4End: Uint32Array,
    private readonly v4Asn: Uint32Array,
    private readonly v4Name: Uint32Array,
    private readonly v6Start: bigint[],
    private readonly v6End: bigint[],
    private readonly v6Asn: Uint32Array,
    private readonly v6Name: Uint32Array,
    private readonly names: string[],
  ) {}

  get size(): number {
    return this.v4Start.length + this.v6Start.length;
  }

  lookupV4(ip: number): { asn: number; provider: string } | null {
    let lo = 0;
    let hi = this.v4Start.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (this.v4Start[mid] <= ip) lo = mid + 1;
      else hi = mid - 1;
    }
    // hi: the last range starting at or before ip.
    if (hi < 0 || this.v4End[hi] < ip) return null;
    return { asn: this.v4Asn[hi], provider: this.names[this.v4Name[hi]] };
  }

  lookupV6(ip: bigint): { asn: number; provider: string } | null {
    let lo = 0;
    let hi = this.v6Start.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (this.v6Start[mid] <= ip) lo = mid + 1;
      else hi = mid - 1;
    }
    if (hi < 0 || this.v6End[hi] < ip) return null;
    return { asn: this.v6Asn[hi], provider: this.names[this.v6Name[hi]] };
  }
}

/** Splits one CSV line of start,end,asn,name (the name may be quoted with "" escapes). */
function splitAsnLine(line: string): [string, string, string, string] | null {
  const a = line.indexOf(',');
  const b = line.indexOf(',', a + 1);
  const c = line.indexOf(',', b + 1);
  if (a < 0 || b < 0 || c < 0) return null;
  let name = line.slice(c + 1);
  if (name.startsWith('"')) name = name.slice(1, name.endsWith('"') ? -1 : undefined).replace(/""/g, '"');
  return [line.slice(0, a), line.slice(a + 1, b), line.slice(b + 1, c), name];
}

async function readAsnCsv(
  file: string,
  names: string[],
  nameIndex: Map<string, number>,
): Promise<{ starts: string[]; ends: string[]; asns: number[]; nameIds: number[] }> {
  const text = await fs.readFile(file, 'utf8');
  const starts: string[] = [];
  const ends: string[] = [];
  const asns: number[] = [];
  const nameIds: number[] = [];
  let from = 0;
  while (from < text.length) {
    let to = text.indexOf('\n', from);
    if (to === -1) to = text.length;
    const line = text.slice(from, to).trimEnd();
    from = to + 1;
    const parts = line ? splitAsnLine(line) : null;
    if (!parts) continue;
    let id = nameIndex.get(parts[3]);
    if (id === undefined) {
      id = names.length;
      names.push(parts[3]);
      nameIndex.set(parts[3], id);
    }
    starts.push(parts[0]);
    ends.push(parts[1]);
    asns.push(Number(parts[2]) >>> 0);
    nameIds.push(id);
  }
  return { starts, ends, asns, nameIds };
}

async function loadAsnTable(dir: string): Promise<AsnTable> {
  const names: string[] = [];
  const nameIndex = new Map<string, number>();
  const v4 = await readAsnCsv(path.join(dir, 'asn-ipv4-num.csv'), names, nameIndex);
  const v6 = await readAsnCsv(path.join(dir, 'asn-ipv6-num.csv'), names, nameIndex);
  // The files are sorted by start; sort anyway, cheaply, in case a release is not.
  const order4 = [...v4.starts.keys()].map((i) => [Number(v4.starts[i]), i] as const).sort((x, y) => x[0] - y[0]);
  const v4Start = new Uint32Array(order4.length);
  const v4End = new Uint32Array(order4.length);
  const v4Asn = new Uint32Array(order4.length);
  const v4Name = new Uint32Array(order4.length);
  order4.forEach(([start, i], k) => {
    v4Start[k] = start;
    v4End[k] = Number(v4.ends[i]);
    v4Asn[k] = v4.asns[i];
    v4Name[k] = v4.nameIds[i];
  });
  const order6 = v6.starts
    .map((s, i) => [BigInt(s), i] as const)
    .sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
  const v6Start = order6.map(([s]) => s);
  const v6End = order6.map(([, i]) => BigInt(v6.ends[i]));
  const v6Asn = Uint32Array.from(order6.map(([, i]) => v6.asns[i]));
  const v6Name = Uint32Array.from(order6.map(([, i]) => v6.nameIds[i]));
  return new AsnTable(v4Start, v4End, v4Asn, v4Name, v6Start, v6End, v6Asn, v6Name, names);
}

/**
 * The mmdb reader's records as decoded, by their offset in the file (mmdb-lib's decoder cache): the
 * country database has one record per country, a few hundred, and a lookup that finds one no longer
 * decodes its map and string again (about a third of a lookup's time). The records are shared:
 * readers only read them. Bounded all the same, in case a larger database is ever loaded.
 */
class DecodedRecords {
  private readonly records = new Map<number, unknown>();

  get(offset: number): unknown {
    return this.records.get(offset);
  }

  set(offset: number, record: unknown): void {
    if (this.records.size < DECODED_RECORDS_MAX) this.records.set(offset, record);
  }
}

const DECODED_RECORDS_MAX = 10_000;

/** The ip-location-db mmdb stores a bare `country_code`, not MaxMind's nested records. */
type CountryCodeRecord = CountryResponse & { country_code?: string };

export interface GeoData {
  country: Reader<CountryCodeRecord>;
  asn: AsnTable;
}

/** Reads both databases from their packages. */
export async function loadGeoData(): Promise<GeoData> {
  const mmdb = require.resolve('@ip-location-db/geo-whois-asn-country-mmdb/geo-whois-asn-country.mmdb');
  const asnDir = path.dirname(require.resolve('@ip-location-db/asn/package.json'));
  const [country, asn] = await Promise.all([
    fs.readFile(mmdb).then((buf) => new Reader<CountryCodeRecord>(buf, { cache: new DecodedRecords() })),
    loadAsnTable(asnDir),
  ]);
  return { country, asn };
}

/** The databases, loaded on first use and then kept; a failed load is tried again next time. */
export class GeoDatabase {
  private data: Promise<GeoData> | null = null;

  constructor(private readonly loader: () => Promise<GeoData> = loadGeoData) {}

  load(): Promise<GeoData> {
    if (!this.data) {
      const loading = this.loader();
      this.data = loading;
      loading.catch(() => {
        if (this.data === loading) this.data = null;
      });
    }
    return this.data;
  }
}
