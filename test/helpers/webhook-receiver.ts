// A real webhook receiver on loopback (node:http) for the webhook tests: it records every request
// and answers as the test says (a status, a redirect, or no answer at all).
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** What to answer the n-th request (0-based): a status with headers, or 'hang' (never answer). */
export type Answer = { status: number; headers?: Record<string, string> } | 'hang';

export class WebhookReceiver {
  readonly received: Received[] = [];
  answer: (n: number, req: Received) => Answer = () => ({ status: 200 });
  private readonly sockets = new Set<Socket>();
  private waiters: (() => void)[] = [];

  private constructor(
    private readonly server: http.Server,
    readonly port: number,
  ) {}

  static async start(): Promise<WebhookReceiver> {
    const server = http.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const receiver = new WebhookReceiver(server, (server.address() as AddressInfo).port);
    server.on('connection', (s: Socket) => {
      receiver.sockets.add(s);
      s.on('close', () => receiver.sockets.delete(s));
    });
    server.on('request', (req, res) => receiver.handle(req, res));
    return receiver;
  }

  url(path = '/hook'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
      const got: Received = { path: req.url ?? '', headers, body: Buffer.concat(chunks).toString('utf8') };
      const answer = this.answer(this.received.length, got);
      this.received.push(got);
      for (const w of this.waiters.splice(0)) w();
      if (answer === 'hang') return;
      res.writeHead(answer.status, answer.headers).end('ok');
    });
  }

  /** Waits until `count` requests have arrived; fails after `ms`. */
  async waitFor(count: number, ms = 15_000): Promise<Received[]> {
    const deadline = Date.now() + ms;
    while (this.received.length < count) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`the receiver got ${this.received.length} requests, expected ${count}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.received.slice(0, count);
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** The event a delivery carries, verified with the standardwebhooks reference library (throws if not). */
export function verified(secret: string, req: Received): { type: string; timestamp: string; data: any } {
  return new Webhook(secret).verify(req.body, req.headers) as { type: string; timestamp: string; data: any };
}
