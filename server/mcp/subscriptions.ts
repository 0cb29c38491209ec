// subscriptions/listen (MCP 2026-07-28, basic/patterns/subscriptions): a long-lived request whose
// answer is an event stream of the change notifications the client opted in to. The stream opens
// with notifications/subscriptions/acknowledged naming the subset of the filter this server honours,
// carries a keep-alive comment while quiet, and when the service stops ends with the request's
// result (graceful closure). The client ends it by closing the stream.
//
// What is honoured: nothing. There are no prompts and no resources, and the tool list is the same
// for every caller and never changes while a process runs (the capability says listChanged: false),
// so the acknowledgment is an empty filter, as the revision asks for unsupported types, and no
// notification ever follows it.
import { Readable } from 'node:stream';
import type { AppContext } from '../context.js';
import { rateLimitHelpUrl } from '../config.js';
import { ApiError } from '../errors.js';
import { INVALID_PARAMS, RESULT_TYPE_COMPLETE, RpcError, type JsonRpcId } from './protocol.js';

export const LISTEN_METHOD = 'subscriptions/listen';
const META_SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';
/** Open listen streams one organization may hold on one server process; more is 429. */
export const LISTEN_STREAMS_PER_ORG = 10;

/** The SubscriptionFilter this server honours, given the one a client asked for. */
export type Honoured = Record<string, never>;

/** Checks params.notifications (a SubscriptionFilter, required); -32602 otherwise. */
export function readFilter(params: Record<string, unknown>): Honoured {
  const f = params.notifications;
  if (typeof f !== 'object' || f === null || Array.isArray(f)) {
    throw new RpcError(INVALID_PARAMS, 'params.notifications must be an object (a SubscriptionFilter).');
  }
  const filter = f as Record<string, unknown>;
  for (const key of ['toolsListChanged', 'promptsListChanged', 'resourcesListChanged']) {
    if (filter[key] !== undefined && typeof filter[key] !== 'boolean') {
      throw new RpcError(INVALID_PARAMS, `params.notifications.${key} must be a boolean.`);
    }
  }
  const subs = filter.resourceSubscriptions;
  if (subs !== undefined && !(Array.isArray(subs) && subs.every((u) => typeof u === 'string'))) {
    throw new RpcError(INVALID_PARAMS, 'params.notifications.resourceSubscriptions must be an array of strings.');
  }
  return {};
}

function frame(message: unknown): string {
  return `data: ${JSON.stringify(message)}\n\n`;
}

class ListenStream {
  readonly stream: Readable;
  closed = false;

  constructor(
    readonly orgId: number,
    private readonly id: JsonRpcId,
    private readonly serverMeta: Record<string, unknown>,
    honoured: Honoured,
    onClose: (s: ListenStream) => void,
  ) {
    this.stream = new Readable({
      read: () => undefined,
      destroy: (err, cb) => {
        this.closed = true;
        onClose(this);
        cb(err);
      },
    });
    this.stream.push(
      frame({
        jsonrpc: '2.0',
        method: 'notifications/subscriptions/acknowledged',
        params: { _meta: { [META_SUBSCRIPTION_ID]: id }, notifications: honoured },
      }),
    );
  }

  keepAlive(): void {
    if (!this.closed) this.stream.push(':\n\n');
  }

  /** Graceful closure: the listen request's own result, then the end of the stream. */
  end(): void {
    if (this.closed) return;
    this.closed = true;
    this.stream.push(
      frame({
        jsonrpc: '2.0',
        id: this.id,
        result: { resultType: RESULT_TYPE_COMPLETE, _meta: { ...this.serverMeta, [META_SUBSCRIPTION_ID]: this.id } },
      }),
    );
    this.stream.push(null);
  }
}

/** The open listen streams of one application context (one API process). */
class ListenStreams {
  private readonly open = new Set<ListenStream>();
  private closing = false;
  private readonly timer: NodeJS.Timeout;

  constructor(app: AppContext) {
    this.timer = setInterval(() => {
      for (const s of this.open) s.keepAlive();
    }, app.config.liveStreamHeartbeatMs);
    this.timer.unref();
  }

  get isClosing(): boolean {
    return this.closing;
  }

  countOf(orgId: number): number {
    let n = 0;
    for (const s of this.open) if (s.orgId === orgId) n++;
    return n;
  }

  add(s: ListenStream): void {
    this.open.add(s);
  }

  remove(s: ListenStream): void {
    this.open.delete(s);
  }

  close(): void {
    this.closing = true;
    clearInterval(this.timer);
    for (const s of [...this.open]) s.end();
    this.open.clear();
  }
}

const registries = new WeakMap<AppContext, ListenStreams>();

/**
 * Made on the first stream, so that its close (registered after the API listener's) runs before
 * the listener waits for its requests to end: the streams finish gracefully first.
 */
function registryOf(app: AppContext): ListenStreams {
  let r = registries.get(app);
  if (!r) {
    const made = new ListenStreams(app);
    app.onClose(async () => made.close());
    registries.set(app, made);
    r = made;
  }
  return r;
}

/**
 * Opens a listen stream for a checked request (its filter read by readFilter). A process that is stopping answers the result at
 * once (the subscription ended gracefully before it began); past LISTEN_STREAMS_PER_ORG, 429.
 */
export function openListenStream(
  app: AppContext,
  orgId: number,
  id: JsonRpcId,
  honoured: Honoured,
  serverMeta: Record<string, unknown>,
): Readable {
  const registry = registryOf(app);
  if (!registry.isClosing && registry.countOf(orgId) >= LISTEN_STREAMS_PER_ORG) {
    throw ApiError.rateLimited(60, rateLimitHelpUrl(app.config, app.apiPort()));
  }
  const s = new ListenStream(orgId, id, serverMeta, honoured, (x) => registry.remove(x));
  if (registry.isClosing) s.end();
  else registry.add(s);
  return s.stream;
}
