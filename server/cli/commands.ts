// qrctl commands. Parsing and output live here, the work in the resource services, so the CLI is
// one more adapter over the same code as REST and MCP. Tested in-process through runCommand.
import fs from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { isAbility, ROLES, type Role } from '../auth/abilities.js';
import type { AppContext } from '../context.js';
import { ApiError } from '../errors.js';
import { createSignInLink, setStaff } from '../accounts/service.js';
import type { OrgRecord } from '../auth/principal.js';
import { addMember, createOrganization, findMember, requireOrganization, setPlan } from '../organizations/service.js';
import { listPlanCodes } from '../plans/plans.js';
import { parseDecimalInteger } from '../schemas/decimal.js';
import { seedDemo } from '../analytics/demo-seed.js';
import { checkDomainHost, listAllDomains } from '../domains/operator.js';
import {
  findQuarantined,
  listQuarantine,
  quarantineDirOf,
  requeueQuarantined,
  spillDirOf,
} from '../analytics/scan-spill.js';
import { migrateClickHouse, migratePostgres, migrateWorkerSchema } from '../stores/migrate.js';
import { createToken } from '../tokens/service.js';
import { createImportBody, type CreateImportInput, type Credentials } from '../imports/schema.js';
import { confirmImport, createImport, readImport, type ImportOut } from '../imports/service.js';
import { checkStoredStyles } from '../qr-styles/operator.js';
import {
  changeGs1Links,
  createCodeFromFlags,
  createGs1FromFlags,
  firstDomainUlid,
  listGs1Codes,
  updateCodeFromFlags,
  writeCodeImage,
  type CodeFlags,
} from '../qr-codes/operator.js';
import { stageImportBody, type StageImportInput } from '../bulk-imports/schema.js';
import { confirmImport as confirmBulkImport, stageImport } from '../bulk-imports/service.js';
import { formatMinor, parseAmount } from '../wallet/money.js';
import { setLowBalanceThreshold, topUp } from '../wallet/service.js';

export class UsageError extends Error {}

export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  /** A progress line that replaces the previous one (a terminal's status line); '' ends it. */
  progress?(line: string): void;
  /** Whether progress lines replace each other (a terminal); otherwise each one stays, so say less. */
  live?: boolean;
}

/** `[#####...............] 25%`: twenty steps. */
export function progressBar(percent: number): string {
  const pct = Math.max(0, Math.min(100, Math.floor(percent)));
  return `[${'#'.repeat(Math.floor(pct / 5)).padEnd(20, '.')}] ${pct}%`;
}

const IMPORT_POLL_MS = 500;
/** After this long without a change, say that the service's worker runs imports. */
const IMPORT_IDLE_NOTE_MS = 30_000;
const FINAL_IMPORT = new Set(['completed', 'completed_with_errors', 'failed', 'expired']);

function formatSeconds(s: number): string {
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  return m < 60
    ? `${m}m${String(s % 60).padStart(2, '0')}s`
    : `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

/** One progress line of an import: bar, links, scans, ETA. */
export function importProgressLine(imp: ImportOut): string {
  const p = imp.progress;
  const n = (v: number) => v.toLocaleString('en');
  if (imp.status === 'previewing') return `previewing ${imp.ulid}…`;
  return [
    `${progressBar(p.percent)} ${imp.status}`,
    `links ${n(p.links_done)}/${n(p.links_total)}`,
    `scans ${n(p.scans_done)}/${n(p.scans_total)}`,
    ...(p.eta_seconds !== null ? [`ETA ${formatSeconds(p.eta_seconds)}`] : []),
  ].join(' · ');
}

/**
 * Follows an import until it leaves `until` (statuses), drawing its progress: every poll on a
 * terminal, otherwise one line per status and per tenth done. The work is done by the service's
 * graphile-worker, exactly as for an import started over REST.
 */
async function followImport(
  app: AppContext,
  org: OrgRecord,
  ulid: string,
  until: (status: string) => boolean,
  io: CliIo,
): Promise<ImportOut> {
  let lastKey = '';
  let lastChange = Date.now();
  let noted = false;
  for (;;) {
    const imp = await readImport(app, org, ulid);
    const line = importProgressLine(imp);
    const key = io.live ? line : `${imp.status}:${Math.floor(imp.progress.percent / 10)}`;
    if (key !== lastKey) {
      io.progress?.(line);
      lastKey = key;
      lastChange = Date.now();
    } else if (!noted && Date.now() - lastChange > IMPORT_IDLE_NOTE_MS) {
      noted = true;
      if (io.live) io.progress?.('');
      io.err(
        `qrctl: nothing has moved for ${IMPORT_IDLE_NOTE_MS / 1000}s; imports run in the service's worker: is the service running (make start)?`,
      );
    }
    if (until(imp.status)) {
      if (io.live) io.progress?.('');
      return imp;
    }
    await sleep(IMPORT_POLL_MS);
  }
}

function importOutcome(imp: ImportOut): Record<string, unknown> {
  if (imp.status === 'failed' || imp.status === 'expired')
    throw new Error(`import ${imp.ulid} ${imp.status}: ${imp.error_message ?? 'no reason given'}`);
  return { import: imp.ulid, status: imp.status, progress: imp.progress };
}

export interface CliCommand {
  usage: string;
  options: Record<string, { type: 'string' | 'boolean'; required?: boolean; help: string }>;
  /** Whether the command needs ClickHouse open in this process. */
  clickhouse?: boolean;
  /** A required positional argument after the command's words (its value is args[name]). */
  positional?: { name: string; help: string };
  run(app: AppContext, args: Record<string, string | boolean | undefined>, io: CliIo): Promise<Record<string, unknown>>;
}

const json = { type: 'boolean' as const, help: 'Print one JSON object.' };

/** The options of `codes create` and `codes update`: a JSON body file, and flags on top of it. */
function codeWriteOptions(body: string): CliCommand['options'] {
  return {
    file: { type: 'string', help: `A JSON file (- for standard input) holding ${body}; flags override its keys.` },
    type: { type: 'string', help: 'url (default), vcard, links, app, event, wifi, text, email, sms, phone or geo.' },
    slug: { type: 'string', help: 'The code’s slug (create: required here or in the file).' },
    destination: { type: 'string', help: 'A URL, or the type’s destination object as JSON ({...}).' },
    'destination-file': { type: 'string', help: 'A JSON file holding the type’s destination object.' },
    domain: { type: 'string', help: 'Domain ULID (create: default the organization’s first domain).' },
    name: { type: 'string', help: 'The code’s name.' },
    status: { type: 'string', help: 'active, paused or archived.' },
    'custom-js-file': {
      type: 'string',
      help: 'A file (- for standard input) holding the code’s custom_js, as text (Enterprise; a verified custom domain).',
    },
    'no-custom-js': { type: 'boolean', help: 'Remove the code’s custom_js (custom_js: null).' },
    json,
  };
}

/** A string option's value, or undefined when it was not given. */
const optional = (a: Record<string, string | boolean | undefined>, k: string): string | undefined =>
  typeof a[k] === 'string' ? a[k] : undefined;

function codeFlags(a: Record<string, string | boolean | undefined>): CodeFlags {
  const s = (k: string) => optional(a, k);
  return {
    file: s('file'),
    destinationFile: s('destination-file'),
    destination: s('destination'),
    type: s('type'),
    slug: s('slug'),
    name: s('name'),
    status: s('status'),
    domain: s('domain'),
    customJsFile: s('custom-js-file'),
    noCustomJs: a['no-custom-js'] === true,
  };
}

export const COMMANDS: Record<string, CliCommand> = {
  'org create': {
    usage:
      'qrctl org create --name NAME --slug SLUG --plan PLAN|none --currency EUR --owner-email EMAIL [--locale en] [--json]',
    options: {
      name: { type: 'string', required: true, help: 'Organization name.' },
      slug: { type: 'string', required: true, help: 'Lowercase slug, used in public URLs.' },
      plan: { type: 'string', required: true, help: 'Plan code (qrctl plans) or none.' },
      currency: { type: 'string', required: true, help: 'ISO 4217 billing currency.' },
      'owner-email': { type: 'string', required: true, help: 'Owner; created when new.' },
      locale: { type: 'string', help: 'Locale, default en.' },
      json,
    },
    async run(app, a) {
      const created = await createOrganization(app, {
        name: String(a.name),
        slug: String(a.slug),
        planCode: a.plan === 'none' ? null : String(a.plan),
        currency: String(a.currency).toUpperCase(),
        locale: a.locale as string | undefined,
        ownerEmail: String(a['owner-email']),
      });
      return {
        organization: {
          ulid: created.org.ulid,
          name: created.org.name,
          slug: created.org.slug,
          currency: created.org.currency,
        },
        plan: created.org.plan?.code ?? null,
        owner: { ulid: created.owner.ulid, email: created.owner.email },
        token: created.token.secret,
        token_id: created.token.token.id,
        sign_in_link: (await createSignInLink(app, created.owner.email)).url,
      };
    },
  },
  'user login-link': {
    usage: 'qrctl user login-link --email EMAIL [--json]',
    options: {
      email: { type: 'string', required: true, help: 'An existing user.' },
      json,
    },
    async run(app, a) {
      const link = await createSignInLink(app, String(a.email)).catch((err) => {
        if (err instanceof ApiError && err.code === 'not_found') throw new UsageError(`no user ${String(a.email)}`);
        throw err;
      });
      return { email: String(a.email), sign_in_link: link.url, expires_at: link.expiresAt.toISOString() };
    },
  },
  'user staff': {
    usage: 'qrctl user staff --email EMAIL [--off] [--json]',
    options: {
      email: { type: 'string', required: true, help: 'User email; created when new.' },
      off: { type: 'boolean', help: 'Clear the staff flag instead of setting it.' },
      json,
    },
    async run(app, a) {
      const user = await setStaff(app, String(a.email), !a.off);
      const out: Record<string, unknown> = { user: user.ulid, email: user.email, is_staff: user.is_staff };
      if (!user.has_password) out.sign_in_link = (await createSignInLink(app, user.email)).url;
      return out;
    },
  },
  'org set-plan': {
    usage: 'qrctl org set-plan --org ULID|SLUG --plan PLAN|none [--json]',
    options: {
      org: { type: 'string', required: true, help: 'Organization ULID or slug.' },
      plan: { type: 'string', required: true, help: 'Plan code or none.' },
      json,
    },
    async run(app, a) {
      const org = await requireOrganization(app.db, String(a.org));
      const plan = await setPlan(app, org, a.plan === 'none' ? null : String(a.plan));
      return { organization: org.ulid, plan: plan?.code ?? null };
    },
  },
  'member add': {
    usage: `qrctl member add --org ULID|SLUG --email EMAIL --role ${ROLES.join('|')} [--json]`,
    options: {
      org: { type: 'string', required: true, help: 'Organization ULID or slug.' },
      email: { type: 'string', required: true, help: 'User email; created when new.' },
      role: { type: 'string', required: true, help: ROLES.join(', ') },
      json,
    },
    async run(app, a) {
      const org = await requireOrganization(app.db, String(a.org));
      if (!ROLES.includes(a.role as Role)) throw new UsageError(`--role must be one of: ${ROLES.join(', ')}`);
      const user = await addMember(app, org, String(a.email), a.role as Role);
      return { organization: org.ulid, user: user.ulid, email: user.email, role: a.role };
    },
  },
  'token create': {
    usage:
      'qrctl token create --org ULID|SLUG --email EMAIL --name NAME [--abilities a,b|*] [--expires-at ISO] [--json]',
    options: {
      org: { type: 'string', required: true, help: 'Organization ULID or slug.' },
      email: { type: 'string', required: true, help: 'A member of the organization.' },
      name: { type: 'string', required: true, help: 'Token name.' },
      abilities: { type: 'string', help: 'Comma-separated abilities, default * (all the role allows).' },
      'expires-at': { type: 'string', help: 'ISO 8601 expiry; default none.' },
      json,
    },
    async run(app, a) {
      const org = await requireOrganization(app.db, String(a.org));
      const member = await findMember(app.db, org, String(a.email));
      if (!member) throw new UsageError(`${String(a.email)} is not a member of ${org.slug}`);
      const abilities = String(a.abilities ?? '*')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      const bad = abilities.filter((x) => x !== '*' && !isAbility(x));
      if (bad.length) throw new UsageError(`unknown abilities: ${bad.join(', ')}`);
      let expiresAt: Date | null = null;
      if (a['expires-at']) {
        expiresAt = new Date(String(a['expires-at']));
        if (Number.isNaN(expiresAt.getTime())) throw new UsageError('--expires-at must be an ISO 8601 date-time');
      }
      const created = await createToken(app, app.db, org, {
        userId: member.userId,
        name: String(a.name),
        abilities,
        expiresAt,
      });
      return { token: created.secret, data: created.token, role: member.role };
    },
  },
  'wallet top-up': {
    usage: 'qrctl wallet top-up --org ULID|SLUG --amount 12.34 [--reference TEXT] [--json]',
    options: {
      org: { type: 'string', required: true, help: 'Organization ULID or slug.' },
      amount: { type: 'string', required: true, help: 'Decimal amount in the organization’s currency.' },
      reference: { type: 'string', help: 'Reference kept on the ledger entry (default qrctl).' },
      json,
    },
    async run(app, a) {
      const org = await requireOrganization(app.db, String(a.org));
      const minor = parseAmount(String(a.amount), org.currency);
      if (minor === null || minor <= 0) {
        throw new UsageError(`--amount must be a positive decimal with at most the decimals of ${org.currency}`);
      }
      const reference = (a.reference as string | undefined) ?? 'qrctl';
      const { balanceMinor } = await topUp(app, org, minor, { reference, actor: { userId: null, name: 'qrctl' } });
      return {
        organization: org.ulid,
        credited: formatMinor(minor, org.currency),
        balance: formatMinor(balanceMinor, org.currency),
        currency: org.currency,
      };
    },
  },
  'wallet threshold': {
    usage: 'qrctl wallet threshold --org ULID|SLUG --amount 5.00|none [--json]',
    options: {
      org: { type: 'string', required: true, help: 'Organization ULID or slug.' },
      amount: {
        type: 'string',
        required: true,
        help: 'Balance below which a wallet.low_balance webhook event is sent; none removes it.',
      },
      json,
    },
    async run(app, a) {
      const org = await requireOrganization(app.db, String(a.org));
      const given = String(a.amount);
      const minor = given === 'none' ? null : parseAmount(given, org.currency);
      if (minor === null && given !== 'none') {
        throw new UsageError(`--amount must be a decimal with at most the decimals of ${org.currency}, or none`);
      }
      await setLowBalanceThreshold(app, org, minor);
      return {
        organization: org.ulid,
        low_balance_threshold: minor === null ? null : formatMinor(minor, org.currency),
        currency: org.currency,
      };
    },
  },
  plans: {
    usage: 'qrctl plans [--json]',
    options: { json },
    async run(app) {
      return { plans: await listPlanCodes(app.db) };
    },
  },
  'seed-demo': {
    usage: 'qrctl seed-demo [--scans 1000000] [--slug demo] [--json]',
    options: {
      scans: { type: 'string', help: 'Synthetic scans to write over the last 90 days (default 1,000,000).' },
      slug: { type: 'string', help: 'Slug of the demo organization (default demo-<random>).' },
      json,
    },
    clickhouse: true,
    async run(app, a, io) {
      const scans = a.scans === undefined ? 1_000_000 : parseDecimalInteger(String(a.scans));
      if (scans === null || scans < 0 || scans > 1_000_000_000) {
        throw new UsageError('--scans must be a whole number from 0 to 1,000,000,000');
      }
      let last = -1;
      const result = await seedDemo(app, {
        scans,
        slug: a.slug as string | undefined,
        onProgress: (done, total) => {
          const pct = total ? Math.floor((done / total) * 100) : 100;
          if (pct === last) return;
          last = pct;
          io.progress?.(`${progressBar(pct)} ${done.toLocaleString('en')} / ${total.toLocaleString('en')} scans`);
        },
      });
      io.progress?.('');
      return {
        organization: { ulid: result.org.ulid, slug: result.org.slug },
        token: result.token,
        brands: result.brands.length,
        codes: result.codes.length,
        scans: result.scans,
      };
    },
  },
  'codes create': {
    usage:
      'qrctl codes create --org ULID|SLUG [--file BODY.json] [--type TYPE] [--slug SLUG] ' +
      '[--destination URL|JSON | --destination-file FILE.json] [--domain ULID] [--name NAME] [--status STATUS] ' +
      '[--custom-js-file FILE.js | --no-custom-js] [--json]',
    options: {
      org: { type: 'string', required: true, help: 'Organization ULID or slug.' },
      ...codeWriteOptions('the body of POST /v1/qr-codes'),
    },
    async run(app, a) {
      const org = await requireOrganization(app.db, String(a.org));
      return { code: await createCodeFromFlags(app, org, codeFlags(a)) };
    },
  },
  'codes update': {
    usage:
      'qrctl codes update CODE_ULID --org ULID|SLUG [--file PATCH.json] [--type TYPE] ' +
      '[--destination URL|JSON | --destination-file FILE.json] [--domain ULID] [--name NAME] [--status STATUS] ' +
      '[--custom-js-file FILE.js | --no-custom-js] [--json]',
    positional: { name: 'code', help: 'The code’s ULID.' },
    options: {
      org: { type: 'string', required: true, help: 'Organization ULID or slug.' },
      ...codeWriteOptions('the body of PATCH /v1/qr-codes/{code_ulid}; omitted keys stay unchanged'),
    },
    async run(app, a) {
      const org = await requireOrganization(app.db, String(a.org));
      return { code: await updateCodeFromFlags(app, org, String(a.code), codeFlags(a)) };
    },
  },
  'gs1 create': {
    usage:
      'qrctl gs1 create --org ULID|SLUG --gtin GTIN [--cpv CPV] [--lot LOT] [--serial SERIAL] [--description TEXT] ' +
      "[--data '17=261231&3103=000500'] [--links JSON|FILE.json] [--slug SLUG] [--name NAME] [--domain ULID] [--json]",
    options: {
      org: { type: 'string', required: true, help: 'Organization ULID or slug.' },
      gtin: { type: 'string', required: true, help: 'The GTIN (8, 12, 13 or 14 digits, check digit verified).' },
      cpv: { type: 'string', help: 'AI 22, consumer product variant.' },
      lot: { type: 'string', help: 'AI 10, batch/lot: a lot of the product, whose links override the product’s.' },
      serial: { type: 'string', help: 'AI 21, serial number.' },
      description: { type: 'string', help: 'A description of the item, carried in the linkset.' },
      data: { type: 'string', help: 'Data attributes as AI=value pairs joined by &, e.g. 17=261231.' },
      links: {
        type: 'string',
        help: 'The links: a JSON array of {link_type, href, title, hreflang?, type?, context?, default?}, or a file holding it (- for standard input).',
      },
      slug: { type: 'string', help: 'The code’s slug (default: the GTIN-14 and its qualifiers).' },
      name: { type: 'string', help: 'The code’s name.' },
      domain: { type: 'string', help: 'Domain ULID (default the organization’s first domain).' },
      json,
    },
    async run(app, a) {
      const org = await requireOrganization(app.db, String(a.org));
      const s = (k: string) => optional(a, k);
      const code = await createGs1FromFlags(app, org, {
        gtin: String(a.gtin),
        cpv: s('cpv'),
        lot: s('lot'),
        serial: s('serial'),
        description: s('description'),
        data: s('data'),
        links: s('links'),
        slug: s('slug'),
        name: s('name'),
        domain: s('domain'),
      });
      return { code };
    },
  },
  'gs1 list': {
    usage: 'qrctl gs1 list --org ULID|SLUG [--gtin GTIN] [--json]',
    options: {
      org: { type: 'string', required: true, help: 'Organization ULID or slug.' },
      gtin: { type: 'string', help: 'Only this product (its own code and its lots and serials).' },
      json,
    },
    async run(app, a) {
      const org = await requireOrganization(app.db, String(a.org));
      return { codes: await listGs1Codes(app, org, optional(a, 'gtin')) };
    },
  },
  'gs1 links': {
    usage:
      'qrctl gs1 links CODE_ULID --org ULID|SLUG [--replace JSON|FILE.json] [--remove-type gs1:TYPE] [--add JSON|FILE.json] [--json]',
    positional: { name: 'code', help: 'The gs1 code’s ULID.' },
    options: {
      org: { type: 'string', required: true, help: 'Organization ULID or slug.' },
      replace: { type: 'string', help: 'Every link replaced by these (a JSON array, or a file holding it).' },
      'remove-type': { type: 'string', help: 'The links of this link type removed (e.g. gs1:recallStatus).' },
      add: {
        type: 'string',
        help: 'These links added (a JSON link or array, or a file holding it), after the others.',
      },
      json,
    },
    async run(app, a) {
      const org = await requireOrganization(app.db, String(a.org));
      const s = (k: string) => optional(a, k);
      const code = await changeGs1Links(app, org, String(a.code), {
        replace: s('replace'),
        removeType: s('remove-type'),
        add: s('add'),
      });
      return { code };
    },
  },
  'codes image': {
    usage:
      'qrctl codes image CODE_ULID --org ULID|SLUG --out FILE [--format svg|png|pdf] [--size N] [--margin N] [--style ULID] [--compressed] [--json]',
    positional: { name: 'code', help: 'The code’s ULID.' },
    options: {
      org: { type: 'string', required: true, help: 'Organization ULID or slug.' },
      out: {
        type: 'string',
        required: true,
        help: 'The file to write (its extension chooses the format when --format is not given).',
      },
      format: { type: 'string', help: 'svg, png or pdf.' },
      size: { type: 'string', help: 'Width in pixels (PNG, SVG) or points (PDF).' },
      margin: { type: 'string', help: 'Quiet zone in modules.' },
      style: { type: 'string', help: 'Render with this style of the organization.' },
      compressed: { type: 'boolean', help: 'A gs1 code: encode its GS1 compressed Digital Link URI.' },
      json,
    },
    async run(app, a) {
      const org = await requireOrganization(app.db, String(a.org));
      // As the query string of GET /v1/qr-codes/{code_ulid}/image: the same schema checks it.
      const query: Record<string, unknown> = {};
      for (const [flag, key] of [
        ['format', 'format'],
        ['size', 'size'],
        ['margin', 'margin'],
        ['style', 'style_ulid'],
      ])
        if (typeof a[flag] === 'string') query[key] = a[flag];
      if (a.compressed) query.compressed = 'true';
      return { image: await writeCodeImage(app, org, String(a.code), query, String(a.out)) };
    },
  },
  'gs1 import': {
    usage: 'qrctl gs1 import --org ULID|SLUG --file PRODUCTS.csv [--domain ULID] [--brand ULID] [--yes] [--json]',
    options: {
      org: { type: 'string', required: true, help: 'Organization ULID or slug.' },
      file: {
        type: 'string',
        required: true,
        help: 'A CSV file, one line per link (docs/gs1.md, bulk import from CSV).',
      },
      domain: {
        type: 'string',
        help: 'Domain ULID of lines without domain_ulid (default the organization’s first domain).',
      },
      brand: { type: 'string', help: 'Brand ULID of lines without brand_ulid.' },
      yes: { type: 'boolean', help: 'Confirm at once: the service’s worker creates the codes.' },
      json,
    },
    async run(app, a) {
      const org = await requireOrganization(app.db, String(a.org));
      let csv: string;
      try {
        csv = await fs.readFile(String(a.file), 'utf8');
      } catch (err) {
        throw new UsageError(`--file ${String(a.file)}: ${(err as Error).message}`);
      }
      // The body of POST /v1/qr-codes/bulk, checked by its schema, staged by the same service.
      const domain = typeof a.domain === 'string' ? a.domain : await firstDomainUlid(app, org);
      const input = app.validators.check<StageImportInput>(stageImportBody, 'body', {
        csv,
        defaults: {
          ...(domain ? { domain_ulid: domain } : {}),
          ...(typeof a.brand === 'string' ? { brand_ulid: a.brand } : {}),
        },
      });
      const staged = await stageImport(app, org, input, { tokenId: null, source: 'cli' });
      if (!a.yes)
        return {
          import: staged.data.ulid,
          status: staged.data.status,
          codes: staged.data.total_rows,
          confirm_token: staged.confirmToken,
          next: `qrctl gs1 confirm ${staged.data.ulid} --org ${org.slug} --confirm-token ${staged.confirmToken}`,
        };
      const queued = await confirmBulkImport(app, org, staged.data.ulid, staged.confirmToken);
      return { import: queued.ulid, status: queued.status, codes: queued.total_rows };
    },
  },
  'gs1 confirm': {
    usage: 'qrctl gs1 confirm IMPORT_ULID --org ULID|SLUG --confirm-token TOKEN [--json]',
    positional: { name: 'import', help: 'The import qrctl gs1 import staged.' },
    options: {
      org: { type: 'string', required: true, help: 'Organization ULID or slug.' },
      'confirm-token': { type: 'string', required: true, help: 'The token qrctl gs1 import printed.' },
      json,
    },
    async run(app, a) {
      const org = await requireOrganization(app.db, String(a.org));
      const queued = await confirmBulkImport(app, org, String(a.import), String(a['confirm-token']));
      return { import: queued.ulid, status: queued.status, codes: queued.total_rows };
    },
  },
  'domains list': {
    usage: 'qrctl domains list [--json]',
    options: { json },
    async run(app) {
      return { domains: await listAllDomains(app) };
    },
  },
  'domains check': {
    usage: 'qrctl domains check HOST [--json]',
    positional: { name: 'host', help: 'The host to look at (every live claim of it).' },
    options: { json },
    async run(app, a) {
      const found = await checkDomainHost(app, String(a.host));
      if (!found.length) throw new UsageError(`no live domain has the host ${String(a.host)}`);
      return { domains: found };
    },
  },
  'styles check': {
    usage: 'qrctl styles check [--org ULID|SLUG] [--rescan] [--json]',
    options: {
      org: { type: 'string', help: 'Only the styles of this organization (ULID or slug).' },
      rescan: {
        type: 'boolean',
        help: 'Measure the scannability of every style that fits the schema again, and store it.',
      },
      json,
    },
    async run(app, a) {
      const org = a.org ? await requireOrganization(app.db, String(a.org)) : undefined;
      return { ...(await checkStoredStyles(app, { orgId: org?.id, rescan: a.rescan === true })) };
    },
  },
  'quarantine list': {
    usage: 'qrctl quarantine list [--json]',
    options: { json },
    async run(app) {
      const spillDir = spillDirOf(app.config.dataDir);
      return { directory: quarantineDirOf(spillDir), batches: await listQuarantine(spillDir) };
    },
  },
  'quarantine show': {
    usage: 'qrctl quarantine show TOKEN [--json]',
    positional: { name: 'token', help: 'The batch’s token (qrctl quarantine list).' },
    options: { json },
    async run(app, a) {
      const found = await findQuarantined(spillDirOf(app.config.dataDir), String(a.token));
      if (!found) throw new UsageError(`no quarantined batch ${String(a.token)}`);
      return { ...found };
    },
  },
  'quarantine requeue': {
    usage: 'qrctl quarantine requeue TOKEN [--json]',
    positional: { name: 'token', help: 'The batch’s token; fix its rows (tsv) in its file first.' },
    options: { json },
    async run(app, a) {
      const done = await requeueQuarantined(spillDirOf(app.config.dataDir), String(a.token));
      if (!done) throw new UsageError(`no quarantined batch ${String(a.token)}`);
      return { token: String(a.token), requeued_as: done.file, rows: done.rows };
    },
  },
  import: {
    usage:
      'qrctl import --org ULID|SLUG --source csv|shlink|bitly|kutt|yourls|dub [--file PATH] [--log-file PATH] [--url URL] [--credentials PATH] [--domain ULID] [--brand ULID] [--on-clash rename|skip|fail] [--no-history] [--archived] [--yes] [--json]',
    options: {
      org: { type: 'string', required: true, help: 'The organization that receives the codes (ULID or slug).' },
      source: { type: 'string', required: true, help: 'csv, shlink, bitly, kutt, yourls or dub.' },
      file: { type: 'string', help: 'An export file to read (CSV, YOURLS dump, Bitly or Dub CSV export).' },
      'log-file': { type: 'string', help: 'YOURLS as CSV: the yourls_log table (--file holds yourls_url).' },
      url: { type: 'string', help: 'The source’s API address (Shlink, Kutt; Bitly or Dub elsewhere than their own).' },
      credentials: {
        type: 'string',
        help: 'A JSON file {"api_key": ...} or {"token": ...}: the secret stays out of the process list.',
      },
      domain: { type: 'string', help: 'Domain ULID for links whose short domain is not the organization’s.' },
      brand: { type: 'string', help: 'Brand ULID of every imported code.' },
      'on-clash': { type: 'string', help: 'A slug already taken: rename (default), skip or fail.' },
      'no-history': { type: 'boolean', help: 'Links only, no scan history.' },
      archived: { type: 'boolean', help: 'Bitly: archived Bitlinks too.' },
      yes: { type: 'boolean', help: 'Confirm once the preview is ready and follow the run.' },
      json,
    },
    async run(app, a, io) {
      const org = await requireOrganization(app.db, String(a.org));
      const readFile = async (path: unknown, what: string) => {
        if (typeof path !== 'string') return undefined;
        try {
          return await fs.readFile(path, 'utf8');
        } catch (err) {
          throw new UsageError(`${what} ${path}: ${(err as Error).message}`);
        }
      };
      let credentials: Credentials | undefined;
      const secret = await readFile(a.credentials, '--credentials');
      if (secret !== undefined) {
        try {
          credentials = JSON.parse(secret) as Credentials;
        } catch {
          throw new UsageError(`--credentials ${String(a.credentials)} is not a JSON object`);
        }
      }
      if (typeof a.url === 'string') credentials = { ...credentials, url: a.url };
      const input = app.validators.check<CreateImportInput>(createImportBody, 'body', {
        source: a.source,
        ...(credentials ? { credentials } : {}),
        ...(a.file !== undefined ? { file: await readFile(a.file, '--file') } : {}),
        ...(a['log-file'] !== undefined ? { log_file: await readFile(a['log-file'], '--log-file') } : {}),
        options: {
          ...(a.domain ? { domain_ulid: a.domain } : {}),
          ...(a.brand ? { brand_ulid: a.brand } : {}),
          ...(a['on-clash'] ? { on_clash: a['on-clash'] } : {}),
          ...(a['no-history'] ? { history: false } : {}),
          ...(a.archived ? { archived: true } : {}),
        },
      });
      const created = await createImport(app, org, input, { tokenId: null });
      const staged = await followImport(app, org, created.data.ulid, (s) => s !== 'previewing', io);
      if (staged.status !== 'staged') return importOutcome(staged);
      if (!a.yes)
        return {
          import: staged.ulid,
          status: staged.status,
          preview: staged.preview,
          confirm_token: created.confirmToken,
          next: `qrctl import confirm ${staged.ulid} --org ${org.slug} --confirm-token ${created.confirmToken}`,
        };
      await confirmImport(app, org, staged.ulid, created.confirmToken);
      return importOutcome(await followImport(app, org, staged.ulid, (s) => FINAL_IMPORT.has(s), io));
    },
  },
  'import confirm': {
    usage: 'qrctl import confirm IMPORT_ULID --org ULID|SLUG --confirm-token TOKEN [--json]',
    positional: { name: 'import', help: 'The import (qrctl import printed it).' },
    options: {
      org: { type: 'string', required: true, help: 'The import’s organization (ULID or slug).' },
      'confirm-token': { type: 'string', required: true, help: 'The token qrctl import printed.' },
      json,
    },
    async run(app, a, io) {
      const org = await requireOrganization(app.db, String(a.org));
      await confirmImport(app, org, String(a.import), String(a['confirm-token']));
      return importOutcome(await followImport(app, org, String(a.import), (s) => FINAL_IMPORT.has(s), io));
    },
  },
  'import watch': {
    usage: 'qrctl import watch IMPORT_ULID --org ULID|SLUG [--json]',
    positional: { name: 'import', help: 'The import to follow until it ends.' },
    options: { org: { type: 'string', required: true, help: 'The import’s organization (ULID or slug).' }, json },
    async run(app, a, io) {
      const org = await requireOrganization(app.db, String(a.org));
      return importOutcome(
        await followImport(app, org, String(a.import), (s) => FINAL_IMPORT.has(s) || s === 'staged', io),
      );
    },
  },
  migrate: {
    usage: 'qrctl migrate [--json]',
    options: { json },
    clickhouse: true,
    async run(app) {
      const postgres = await migratePostgres(app.db, app.log);
      await migrateWorkerSchema(app.databaseUrl);
      const clickhouse = await migrateClickHouse(app.ch, app.config.scanRetentionDays, app.log);
      return { postgres_applied: postgres, clickhouse_applied: clickhouse };
    },
  },
};

export function helpText(): string {
  return ['Usage:', ...Object.values(COMMANDS).map((c) => `  ${c.usage}`)].join('\n');
}

/** Finds the command named by the leading words of argv and parses its options. */
export function parseCommand(argv: string[]): {
  name: string;
  command: CliCommand;
  args: Record<string, string | boolean | undefined>;
} {
  const name = [argv.slice(0, 2).join(' '), argv[0]].find((n) => n && COMMANDS[n]);
  if (!name) throw new UsageError(argv.length ? `unknown command: ${argv.slice(0, 2).join(' ')}` : 'no command given');
  const command = COMMANDS[name];
  const rest = argv.slice(name.split(' ').length);
  let values: Record<string, string | boolean | undefined>;
  try {
    const options = Object.fromEntries(Object.entries(command.options).map(([k, o]) => [k, { type: o.type }]));
    const parsed = parseArgs({ args: rest, options, strict: true, allowPositionals: !!command.positional });
    values = parsed.values as typeof values;
    if (command.positional) {
      if (parsed.positionals.length !== 1) throw new Error(`expected one ${command.positional.name.toUpperCase()}`);
      values[command.positional.name] = parsed.positionals[0];
    }
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\nusage: ${command.usage}`);
  }
  const missing = Object.entries(command.options)
    .filter(([k, o]) => o.required && (values[k] === undefined || values[k] === ''))
    .map(([k]) => `--${k}`);
  if (missing.length) throw new UsageError(`missing ${missing.join(', ')}\nusage: ${command.usage}`);
  return { name, command, args: values };
}

function describe(result: Record<string, unknown>): string {
  return Object.entries(result)
    .map(([k, v]) => `${k}: ${typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v)}`)
    .join('\n');
}

/** Runs a parsed command; returns the exit code (0 ok, 2 bad arguments or input, 1 failure). */
export async function runCommand(app: AppContext, parsed: ReturnType<typeof parseCommand>, io: CliIo): Promise<number> {
  try {
    const result = await parsed.command.run(app, parsed.args, io);
    io.out(parsed.args.json ? JSON.stringify(result) : describe(result));
    if (!parsed.args.json && typeof result.token === 'string') {
      io.err('The token secret is shown once; store it now.');
    }
    return 0;
  } catch (err) {
    return reportError(err, parsed.args.json === true, io);
  }
}

export function reportError(err: unknown, asJson: boolean, io: CliIo): number {
  let code = 1;
  let message: string;
  let fields: Record<string, string[]> | undefined;
  if (err instanceof UsageError) {
    code = 2;
    message = err.message;
  } else if (err instanceof ApiError) {
    code = err.status < 500 ? 2 : 1;
    fields = err.extra.errors as Record<string, string[]> | undefined;
    message = fields
      ? Object.entries(fields)
          .map(([f, m]) => `${f.replace(/_/g, '-')}: ${m.join(' ')}`)
          .join('\n')
      : err.message;
  } else {
    message = err instanceof Error ? err.message : String(err);
  }
  if (asJson) io.out(JSON.stringify({ error: { message, ...(fields ? { errors: fields } : {}) } }));
  else io.err(`qrctl: ${message}`);
  return code;
}
