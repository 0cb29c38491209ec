// A running service for a test file: a fresh Postgres database and ClickHouse database, the API
// on a random port, a controllable clock, and factories for organizations and tokens. Every
// answer the tests receive from a documented operation is checked against the OpenAPI document by
// Prism's validator (./conformance.ts).
import { boot } from '../../server/bootstrap.js';
import { loadConfig, type Config } from '../../server/config.js';
import type { AppContext, Clock } from '../../server/context.js';
import { createApiHandler, listen } from '../../server/http/api-app.js';
import type { RouteMounter } from '../../server/http-common/respond.js';
import { createLogger } from '../../server/logger.js';
import { apiMounts } from '../../server/mounts.js';
import { addMember, createOrganization } from '../../server/organizations/service.js';
import type { OrgRecord } from '../../server/auth/principal.js';
import type { Role } from '../../server/auth/abilities.js';
import { migrateClickHouse } from '../../server/stores/migrate.js';
import { createToken } from '../../server/tokens/service.js';
import { topUp } from '../../server/wallet/service.js';
import { assertConforms } from './conformance.js';
import { testGeo } from './geo.js';
import { Validators } from '../../server/schemas/validation.js';
import { freshDatabases, testLogLevel } from './stores.js';

/** A clock that follows real time until a test sets or advances it. */
export class TestClock implements Clock {
  private offsetMs = 0;
  private fixed: number | null = null;
  now(): Date {
    return new Date(this.fixed ?? Date.now() + this.offsetMs);
  }
  set(date: Date | string): void {
    this.fixed = new Date(date).getTime();
  }
  advance(ms: number): void {
    if (this.fixed !== null) this.fixed += ms;
    else this.offsetMs += ms;
  }
  reset(): void {
    this.fixed = null;
    this.offsetMs = 0;
  }
}

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  token?: string;
  body?: unknown;
  /** Sent as-is, for malformed-body tests. */
  rawBody?: string;
  headers?: Record<string, string>;
}

export interface TestOrg {
  org: OrgRecord;
  token: string;
  ownerEmail: string;
}

export class TestService {
  orgCounter = 0;
  constructor(
    readonly app: AppContext,
    readonly url: string,
    readonly clock: TestClock,
    private readonly stop: () => Promise<void>,
    readonly stores: TestStores,
  ) {}

  async request<T = any>(method: string, path: string, opts: RequestOptions = {}): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { Accept: 'application/json', ...opts.headers };
    if (opts.token) headers.Authorization = `Bearer ${opts.token}`;
    let body: string | undefined;
    if (opts.rawBody !== undefined) body = opts.rawBody;
    else if (opts.body !== undefined) body = JSON.stringify(opts.body);
    if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
      headers['Content-Type'] = 'application/json';
    }
    const res = await fetch(this.url + path, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    if (res.headers.get('content-type')?.includes('json') && text) parsed = JSON.parse(text);
    const out: ApiResponse<T> = { status: res.status, headers: res.headers, body: parsed as T, text };
    await assertConforms({ method, path, status: res.status, headers: res.headers, body: text ? parsed : undefined });
    return out;
  }

  get<T = any>(path: string, token?: string, headers?: Record<string, string>) {
    return this.request<T>('GET', path, { token, headers });
  }
  post<T = any>(path: string, token: string | undefined, body?: unknown) {
    return this.request<T>('POST', path, { token, body });
  }
  patch<T = any>(path: string, token: string | undefined, body?: unknown) {
    return this.request<T>('PATCH', path, { token, body });
  }
  delete<T = any>(path: string, token: string | undefined) {
    return this.request<T>('DELETE', path, { token });
  }

  /** An organization with an owner and a `*` token; plan null means no plan (no API access). */
  async createOrg(
    opts: { plan?: string | null; currency?: string; balanceMinor?: number; slug?: string; name?: string } = {},
  ): Promise<TestOrg> {
    const n = ++this.orgCounter;
    const slug = opts.slug ?? `org${n}-${Math.random().toString(36).slice(2, 8)}`;
    const ownerEmail = `owner-${slug}@example.com`;
    const created = await createOrganization(this.app, {
      name: opts.name ?? `Org ${n}`,
      slug,
      planCode: opts.plan === undefined ? 'business_monthly' : opts.plan,
      currency: opts.currency ?? 'EUR',
      ownerEmail,
    });
    if (opts.balanceMinor) await topUp(this.app, created.org, opts.balanceMinor);
    return { org: created.org, token: created.token.secret, ownerEmail };
  }

  /** A token for a member (created with the role when new) holding the given abilities. */
  async createToken(
    org: OrgRecord,
    opts: { abilities?: string[]; role?: Role; email?: string; expiresAt?: Date | null; name?: string } = {},
  ): Promise<string> {
    const email = opts.email ?? `${opts.role ?? 'owner'}-${Math.random().toString(36).slice(2, 8)}@example.com`;
    const user = await addMember(this.app, org, email, opts.role ?? 'owner');
    const created = await createToken(this.app, this.app.db, org, {
      userId: (await this.app.db('users').where({ ulid: user.ulid }).first('id')).id,
      name: opts.name ?? 'test token',
      abilities: opts.abilities ?? ['*'],
      expiresAt: opts.expiresAt ?? null,
    });
    return created.secret;
  }

  close(): Promise<void> {
    return this.stop();
  }
}

export interface StartOptions {
  config?: Partial<Config>;
  env?: Record<string, string>;
  mounts?: RouteMounter[];
  /** Skip the API listener (for tests that only need the context). */
  api?: boolean;
  /** The stores of an earlier TestService (its `stores`), to start the service again on them. */
  stores?: TestStores;
  /** The API listener's port (default: any free one), e.g. the port of the service started again. */
  apiPort?: number;
}

export type TestStores = Awaited<ReturnType<typeof freshDatabases>>;

/**
 * The request schemas, compiled once for the whole test process: every test service's context shares
 * them (they are the modules' constants, the same for every context), so the suite does not compile
 * them again for each of its many services (about 0.1 s each in a warm process).
 */
const testValidators = new Validators();

/** Starts a service on fresh databases; call close() in after(). */
export async function startTestService(opts: StartOptions = {}): Promise<TestService> {
  const dbs = opts.stores ?? (await freshDatabases());
  const config = loadConfig(
    { LOG_LEVEL: testLogLevel(), ...opts.env },
    {
      dataDir: dbs.dataDir,
      databaseUrl: dbs.databaseUrl,
      clickhouseDatabase: dbs.chDatabase,
      apiPort: 0,
      redirectPort: 0,
      enableWorker: false,
      // The production budget (5 s) abandons renders on a CI machine loaded by other work; tests of
      // the budget itself set their own.
      renderTimeoutMs: 60_000,
      scannabilityTimeoutMs: 120_000,
      // Every call admitted in its own round trip, so that tests read exact counts, windows and
      // balances at once; the tests of leases (api-leases.test.ts) turn them on.
      apiLeaseCalls: 1,
      ...opts.config,
    },
  );
  const log = createLogger(config.logLevel, { test: true });
  const clock = new TestClock();
  const ch = { ...dbs.ch, database: dbs.chDatabase };
  const app = await boot(config, log, {
    databaseUrl: dbs.databaseUrl,
    sharedClickHouse: ch,
    migrate: false,
    clock,
    poolMax: 20,
    geo: testGeo,
    validators: testValidators,
    reconcileFallbacks: true,
  });
  await migrateClickHouse(app.ch, config.scanRetentionDays, log);
  let url = '';
  if (opts.api !== false) {
    const api = await listen(
      createApiHandler(app, { mounts: opts.mounts ?? apiMounts }),
      opts.apiPort ?? 0,
      '127.0.0.1',
    );
    app.setApiPort(api.port);
    app.onClose(() => api.close());
    url = `http://127.0.0.1:${api.port}`;
  }
  return new TestService(app, url, clock, () => app.close(), dbs);
}
