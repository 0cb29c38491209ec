// A dashboard client over real HTTP: keeps its cookies like a browser and sends the CSRF token
// the session endpoint hands out on every write.
import { runCommand, parseCommand, UsageError } from '../../server/cli/commands.js';
import type { AppContext } from '../../server/context.js';

export interface WebResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export class WebClient {
  readonly cookies = new Map<string, string>();
  csrf = '';

  constructor(readonly baseUrl: string) {}

  cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async request<T = any>(
    method: string,
    path: string,
    opts: { body?: unknown; csrf?: string | null; headers?: Record<string, string> } = {},
  ): Promise<WebResponse<T>> {
    const headers: Record<string, string> = { Accept: 'application/json', ...opts.headers };
    if (this.cookies.size) headers.Cookie = this.cookieHeader();
    const csrf = opts.csrf === undefined ? this.csrf : opts.csrf;
    if (method !== 'GET' && csrf) headers['X-CSRF-Token'] = csrf;
    let body: string | undefined;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['Content-Type'] = 'application/json';
    }
    const res = await fetch(this.baseUrl + path, { method, headers, body, redirect: 'manual' });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair.indexOf('=');
      const name = pair.slice(0, i);
      const value = pair.slice(i + 1);
      if (value === '' || /Max-Age=0\b/.test(c)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const text = await res.text();
    const parsed = res.headers.get('content-type')?.includes('json') && text ? JSON.parse(text) : text;
    if (parsed && typeof parsed === 'object' && typeof parsed.csrf_token === 'string') this.csrf = parsed.csrf_token;
    return { status: res.status, headers: res.headers, body: parsed as T };
  }

  get<T = any>(path: string) {
    return this.request<T>('GET', path);
  }
  post<T = any>(path: string, body?: unknown) {
    return this.request<T>('POST', path, { body });
  }
  patch<T = any>(path: string, body?: unknown) {
    return this.request<T>('PATCH', path, { body });
  }
  delete<T = any>(path: string) {
    return this.request<T>('DELETE', path);
  }

  /** Loads the session endpoint (cookies and CSRF token), then signs in. */
  async signIn(email: string, password: string): Promise<WebResponse> {
    await this.get('/app/api/session');
    return this.post('/app/api/sign-in', { email, password });
  }

  /** Opens a one-time link's secret and sets the password through it. */
  async redeem(secret: string, password: string, name?: string): Promise<WebResponse> {
    await this.get('/app/api/session');
    return this.post(`/app/api/links/${secret}`, { password, ...(name ? { name } : {}) });
  }

  /** An organization operation: /app/api/orgs/{org}<path>. */
  org(orgUlid: string) {
    const base = `/app/api/orgs/${orgUlid}`;
    return {
      get: <T = any>(path: string) => this.get<T>(base + path),
      post: <T = any>(path: string, body?: unknown) => this.post<T>(base + path, body),
      patch: <T = any>(path: string, body?: unknown) => this.patch<T>(base + path, body),
      delete: <T = any>(path: string) => this.delete<T>(base + path),
    };
  }
}

/** The secret of a one-time link URL (…/app/link/<secret>). */
export function linkSecret(url: string): string {
  const m = /\/app\/link\/([A-Za-z0-9]+)$/.exec(url);
  if (!m) throw new Error(`not a dashboard link: ${url}`);
  return m[1];
}

/**
 * Runs a qrctl command in-process as the terminal would: its exit code (2 for arguments parseCommand
 * refuses), what it printed on stdout and stderr, and its progress lines (`live`: a terminal's,
 * redrawn in place).
 */
export async function runQrctl(app: AppContext, argv: string[], opts: { live?: boolean } = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const progress: string[] = [];
  let code: number;
  try {
    code = await runCommand(app, parseCommand(argv), {
      out: (l) => out.push(l),
      err: (l) => err.push(l),
      progress: (l) => progress.push(l),
      live: opts.live === true,
    });
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    code = 2;
    err.push(e.message);
  }
  return { code, out: out.join('\n'), err: err.join('\n'), progress };
}

/** Runs a qrctl command in-process and returns its JSON output. */
export async function qrctl(app: AppContext, argv: string[]): Promise<Record<string, any>> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCommand(app, parseCommand([...argv, '--json']), {
    out: (l) => out.push(l),
    err: (l) => err.push(l),
  });
  if (code !== 0) throw new Error(`qrctl ${argv.join(' ')} failed (${code}): ${err.join('\n')} ${out.join('\n')}`);
  return JSON.parse(out.join('\n'));
}
