// Live scan stream clients for tests, over independent SSE implementations: the `eventsource`
// package (a WHATWG EventSource for Node: reconnection, Last-Event-ID) and, where a test must send
// its own Last-Event-ID or stop reading, a fetch read through `eventsource-parser`.
import http from 'node:http';
import { EventSource } from 'eventsource';
import { createParser, type EventSourceMessage } from 'eventsource-parser';

export interface StreamEvent {
  event: string;
  id: string | undefined;
  data: any;
}

/** An EventSource on `url` with a bearer token; collects every scan, action, gap and reset event. */
export class TestEventSource {
  readonly events: StreamEvent[] = [];
  readonly es: EventSource;
  opened = 0;
  errors: { status?: number; message?: string }[] = [];

  constructor(url: string, token: string) {
    this.es = new EventSource(url, {
      fetch: (input, init) =>
        fetch(input, { ...init, headers: { ...init?.headers, Authorization: `Bearer ${token}` } }),
    });
    this.es.onopen = () => this.opened++;
    this.es.onerror = (e) => this.errors.push({ status: e.code, message: e.message });
    for (const type of ['scan', 'action', 'gap', 'reset']) {
      this.es.addEventListener(type, (e) => {
        const m = e as MessageEvent<string>;
        this.events.push({ event: type, id: m.lastEventId || undefined, data: JSON.parse(m.data) });
      });
    }
  }

  scans(): StreamEvent[] {
    return this.events.filter((e) => e.event === 'scan');
  }

  actions(): StreamEvent[] {
    return this.events.filter((e) => e.event === 'action');
  }

  close(): void {
    this.es.close();
  }
}

/**
 * A stream read with plain HTTP (headers of the test's choosing, e.g. Last-Event-ID) and parsed by
 * eventsource-parser; `pause()` stops reading from the socket, like a consumer that stalls.
 */
export class RawEventStream {
  readonly events: StreamEvent[] = [];
  readonly comments: string[] = [];
  retry: number | undefined;
  status = 0;
  private res: http.IncomingMessage | null = null;
  private req: http.ClientRequest | null = null;

  static open(url: string, headers: Record<string, string>): Promise<RawEventStream> {
    const s = new RawEventStream();
    return new Promise((resolve, reject) => {
      const parser = createParser({
        onEvent: (m: EventSourceMessage) =>
          s.events.push({ event: m.event ?? 'message', id: m.id, data: JSON.parse(m.data) }),
        onComment: (c) => s.comments.push(c),
        onRetry: (ms) => (s.retry = ms),
      });
      s.req = http.get(url, { headers: { Accept: 'text/event-stream', ...headers }, agent: false }, (res) => {
        s.res = res;
        s.status = res.statusCode ?? 0;
        res.setEncoding('utf8');
        if (s.status !== 200) {
          let body = '';
          res.on('data', (c: string) => (body += c));
          res.on('end', () => reject(Object.assign(new Error(`status ${s.status}`), { status: s.status, body })));
          return;
        }
        res.on('data', (c: string) => parser.feed(c));
        res.on('error', () => undefined);
        resolve(s);
      });
      s.req.on('error', reject);
    });
  }

  scans(): StreamEvent[] {
    return this.events.filter((e) => e.event === 'scan');
  }

  actions(): StreamEvent[] {
    return this.events.filter((e) => e.event === 'action');
  }

  pause(): void {
    this.res?.pause();
  }

  resume(): void {
    this.res?.resume();
  }

  close(): void {
    this.req?.destroy();
  }
}

/** The status and JSON body of a stream request refused before it started. */
export async function refusedStream(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(url, { headers: { Accept: 'text/event-stream', ...headers } });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
}
