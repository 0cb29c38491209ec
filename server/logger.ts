import { pino, type Logger as PinoLogger } from 'pino';

export type Logger = PinoLogger;

/** Structured JSON logs on stdout; one logger per process, passed explicitly through the context. */
export function createLogger(level: string, bindings: Record<string, unknown> = {}): Logger {
  return pino({ level, base: { service: 'qr-service', ...bindings }, timestamp: pino.stdTimeFunctions.isoTime });
}
