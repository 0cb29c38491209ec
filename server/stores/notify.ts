// One LISTEN connection per process for in-memory caches that Postgres invalidates through
// NOTIFY. While the connection is down, `live` is false and caches must not serve entries;
// after a reconnect every subscriber is told to drop everything (notifications may be lost).
import pg from 'pg';
import type { Logger } from '../logger.js';

export type NotifyHandler = (payload: string) => void;

export class NotifyListener {
  private client: pg.Client | null = null;
  private readonly handlers = new Map<string, Set<NotifyHandler>>();
  private readonly resetHandlers = new Set<() => void>();
  private closed = false;
  private retry: NodeJS.Timeout | null = null;
  private starting: Promise<void> | null = null;
  live = false;

  constructor(
    private readonly databaseUrl: string,
    private readonly log: Logger,
  ) {}

  /** Subscribes to a channel; `onReset` runs whenever notifications may have been missed. */
  async subscribe(channel: string, handler: NotifyHandler, onReset: () => void): Promise<void> {
    if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`bad channel name ${channel}`);
    let set = this.handlers.get(channel);
    const fresh = !set;
    if (!set) this.handlers.set(channel, (set = new Set()));
    set.add(handler);
    this.resetHandlers.add(onReset);
    await (this.starting ??= this.connect());
    if (fresh && this.client && this.live) await this.client.query(`LISTEN ${channel}`);
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({ connectionString: this.databaseUrl, application_name: 'qr-service:listen' });
    client.on('notification', (msg) => {
      for (const h of this.handlers.get(msg.channel) ?? []) h(msg.payload ?? '');
    });
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client, new Error('connection ended')));
    try {
      await client.connect();
      for (const channel of this.handlers.keys()) await client.query(`LISTEN ${channel}`);
      this.client = client;
      this.live = true;
      for (const reset of this.resetHandlers) reset();
    } catch (err) {
      await client.end().catch(() => undefined);
      this.lost(client, err as Error);
    }
  }

  private lost(client: pg.Client, err: Error): void {
    if (this.client && this.client !== client) return;
    if (this.live) this.log.warn({ err }, 'LISTEN connection lost; caches bypassed until it is back');
    this.live = false;
    this.client = null;
    for (const reset of this.resetHandlers) reset();
    if (this.closed || this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = null;
      void this.connect();
    }, 500);
    this.retry.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.live = false;
    if (this.retry) clearTimeout(this.retry);
    const c = this.client;
    this.client = null;
    await c?.end().catch(() => undefined);
  }
}
