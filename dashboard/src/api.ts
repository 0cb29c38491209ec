// The dashboard's only way to the service: JSON calls under /app/api with the session cookie and
// the CSRF token on every write. Organization calls reach the same operations as the REST API.

export interface ErrorBody {
  message: string;
  code?: string;
  errors?: Record<string, string[]>;
  required_ability?: string;
  retry_after?: number;
  /** style_not_scannable: why the style would not scan. */
  reasons?: string[];
  scannability?: { reasons?: string[] };
}

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly body: ErrorBody,
  ) {
    super(body.message || `Request failed (${status}).`);
  }
  /** The first message for a field, if the service named one. */
  field(name: string): string | undefined {
    return this.body.errors?.[name]?.[0];
  }
}

let csrfToken = '';
let onSignedOut: () => void = () => undefined;

export function setCsrfToken(token: string): void {
  csrfToken = token;
}

/** Called when a call finds the session gone (expired, signed out elsewhere). */
export function onSessionLost(fn: () => void): void {
  onSignedOut = fn;
}

export interface CallOptions {
  body?: unknown;
  accept?: string;
}

async function send(method: string, path: string, opts: CallOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { Accept: opts.accept ?? 'application/json' };
  if (method !== 'GET') headers['X-CSRF-Token'] = csrfToken;
  let body: string | undefined;
  if (opts.body !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(opts.body);
  }
  const res = await fetch(`/app/api${path}`, { method, headers, body, credentials: 'same-origin' });
  if (!res.ok) {
    const parsed = (await res.json().catch(() => null)) as ErrorBody | null;
    const failure = new ApiFailure(res.status, parsed ?? { message: `Request failed (${res.status}).` });
    if (res.status === 401 && !path.startsWith('/sign-in') && !path.startsWith('/links/')) onSignedOut();
    throw failure;
  }
  return res;
}

export async function call<T>(method: string, path: string, opts: CallOptions = {}): Promise<T> {
  const res = await send(method, path, opts);
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}

/** The file name of a Content-Disposition header, if it names one. */
function attachmentName(header: string | null): string | undefined {
  const m = header ? /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(header) : null;
  return m ? decodeURIComponent(m[1]) : undefined;
}

/** Fetches a response's body as a Blob (path under /app/api): images, files. */
async function fetchBlob(path: string, accept: string): Promise<Blob> {
  return (await send('GET', path, { accept })).blob();
}

/**
 * Downloads a response as a file (path under /app/api), named as the service's
 * Content-Disposition says, else `filename`.
 */
async function download(path: string, filename: string, accept: string): Promise<void> {
  const res = await send('GET', path, { accept });
  const blob = await res.blob();
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = attachmentName(res.headers.get('Content-Disposition')) ?? filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export interface OrgApi {
  get<T>(path: string): Promise<T>;
  post<T>(path: string, body?: unknown): Promise<T>;
  patch<T>(path: string, body?: unknown): Promise<T>;
  del(path: string): Promise<void>;
  /** Saves an operation's answer as a file (CSV exports, images). */
  download(path: string, filename: string, accept: string): Promise<void>;
  /** An operation's answer as a Blob (images). */
  blob(path: string, accept: string): Promise<Blob>;
  /** The address of an organization operation, for links and images. */
  url(path: string): string;
}

/** Operations of one organization: /app/api/orgs/{org}<operation path>. */
export function orgApi(orgUlid: string): OrgApi {
  const base = `/orgs/${orgUlid}`;
  return {
    get: (path) => call('GET', base + path),
    post: (path, body) => call('POST', base + path, { body }),
    patch: (path, body) => call('PATCH', base + path, { body }),
    del: (path) => call('DELETE', base + path),
    download: (path, filename, accept) => download(base + path, filename, accept),
    blob: (path, accept) => fetchBlob(base + path, accept),
    url: (path) => `/app/api${base}${path}`,
  };
}

export function query(params: Record<string, string | number | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}
