// The HTTPS side of the redirect (REDIRECT_TLS_PORT): the certificate is chosen by SNI from the
// custom domain's certificate in Postgres, cached as a TLS context per host (misses too) and dropped
// when Postgres says the domain changed (the redirect_cache NOTIFY channel: every certificate write
// also updates its domain row). A client without SNI, or with a name we hold no certificate for,
// gets the configured default certificate (the shared fallback host's).
//
// Session tickets are encrypted with keys derived from SECRET_KEY and the UTC day, so every process
// can resume every other process's sessions, and the keys change daily.
import crypto from 'node:crypto';
import https from 'node:https';
import type http from 'node:http';
import tls from 'node:tls';
import { LRUCacheWithDelete } from 'mnemonist';
import type { NotifyListener } from '../stores/notify.js';

export interface CertificatePair {
  certificatePem: string;
  privateKeyPem: string;
}

interface ServedCertificate extends CertificatePair {
  notAfter: Date;
}

export type CertificateLoader = (host: string) => Promise<ServedCertificate | null>;

interface Slot {
  context: tls.SecureContext | null;
  /** Re-read after this time (the TTL, or the certificate's expiry if sooner). */
  until: number;
}

const CHANNEL = 'redirect_cache';
const DAY_MS = 86_400_000;

/** 48 bytes of session ticket keys for a UTC day. */
export function ticketKeysFor(secretKey: Buffer, at: Date): Buffer {
  const day = Math.floor(at.getTime() / DAY_MS);
  return Buffer.from(crypto.hkdfSync('sha256', secretKey, Buffer.alloc(0), `tls session tickets ${day}`, 48));
}

const MAX_HOSTS = 10_000;

export interface CertificateCacheOptions {
  /** Entries are re-read after this long (or at the certificate's expiry if sooner). */
  ttlMs?: number;
  /**
   * false only when a server name surely is no domain (the redirect's known-keys filter): then the
   * default certificate is used without a query and nothing is cached, so a flood of random SNI
   * names costs neither a Postgres query nor memory each.
   */
  hostMayExist?: (host: string) => boolean;
}

export class CertificateCache {
  /** Bounded: the least recently used name goes first. */
  private slots = new LRUCacheWithDelete<string, Slot>(MAX_HOSTS);
  private readonly ttlMs: number;
  private readonly hostMayExist: (host: string) => boolean;
  private generation = 0;
  private ticketKeys: Buffer;
  /** hits: from memory; misses: read from Postgres; filtered: no domain, default certificate. */
  readonly stats = { hits: 0, misses: 0, failures: 0, filtered: 0 };

  constructor(
    private readonly load: CertificateLoader,
    private readonly listener: NotifyListener,
    private readonly secretKey: Buffer,
    opts: CertificateCacheOptions = {},
  ) {
    this.ttlMs = opts.ttlMs ?? 5 * 60_000;
    this.hostMayExist = opts.hostMayExist ?? (() => true);
    this.ticketKeys = ticketKeysFor(secretKey, new Date());
  }

  async start(): Promise<void> {
    await this.listener.subscribe(
      CHANNEL,
      (payload) => this.onNotification(payload),
      () => this.clear(),
    );
  }

  private onNotification(payload: string): void {
    this.generation++;
    try {
      const msg = JSON.parse(payload) as { t: string; keys: string[] };
      if (msg.t === 'domain') for (const k of msg.keys) this.slots.delete(k);
    } catch {
      this.clear();
    }
  }

  clear(): void {
    this.generation++;
    this.slots.clear();
  }

  /** The keys every context (and the server's default one) encrypts tickets with today. */
  currentTicketKeys(now = new Date()): Buffer {
    const keys = ticketKeysFor(this.secretKey, now);
    if (!keys.equals(this.ticketKeys)) {
      this.ticketKeys = keys;
      this.clear();
    }
    return this.ticketKeys;
  }

  /** The context for a server name: cached, or loaded; null means "use the default certificate". */
  context(servername: string): tls.SecureContext | null | Promise<tls.SecureContext | null> {
    const host = servername.toLowerCase();
    const slot = this.slots.get(host);
    const now = Date.now();
    if (slot && now < slot.until) {
      this.stats.hits++;
      return slot.context;
    }
    if (this.listener.live && !this.hostMayExist(host)) {
      this.stats.filtered++;
      return null;
    }
    return this.fill(host, now);
  }

  private async fill(host: string, now: number): Promise<tls.SecureContext | null> {
    this.stats.misses++;
    const gen = this.generation;
    const cert = await this.load(host);
    let context: tls.SecureContext | null = null;
    if (cert) {
      try {
        context = tls.createSecureContext({
          cert: cert.certificatePem,
          key: cert.privateKeyPem,
          ticketKeys: this.currentTicketKeys(),
        });
      } catch {
        this.stats.failures++;
      }
    }
    // Cache only what no change overtook, and only while notifications flow.
    if (gen === this.generation && this.listener.live) {
      const until = Math.min(now + this.ttlMs, cert ? cert.notAfter.getTime() : Infinity);
      this.slots.set(host, { context, until });
    }
    return context;
  }
}

export interface TlsServerOptions {
  defaultCertificate: CertificatePair;
  certificates: CertificateCache;
  keepAliveTimeout?: number;
}

/** An HTTPS server answering with `listener`, its certificate chosen by SNI. */
export function createTlsServer(
  opts: TlsServerOptions,
  listener: (req: http.IncomingMessage, res: http.ServerResponse) => void,
): https.Server {
  const { certificates } = opts;
  const server = https.createServer(
    {
      cert: opts.defaultCertificate.certificatePem,
      key: opts.defaultCertificate.privateKeyPem,
      ticketKeys: certificates.currentTicketKeys(),
      keepAliveTimeout: opts.keepAliveTimeout ?? 5000,
      SNICallback: (servername, cb) => {
        let found: ReturnType<CertificateCache['context']>;
        try {
          found = certificates.context(servername);
        } catch (err) {
          cb(err as Error);
          return;
        }
        // A falsy context means the server's default certificate.
        if (!(found instanceof Promise)) cb(null, found ?? undefined);
        else
          found.then(
            (ctx) => cb(null, ctx ?? undefined),
            (err: Error) => cb(err),
          );
      },
    },
    listener,
  );
  // New day, new ticket keys: checked hourly.
  const rotate = setInterval(() => server.setTicketKeys(certificates.currentTicketKeys()), 3600_000);
  rotate.unref();
  server.once('close', () => clearInterval(rotate));
  return server;
}
