import { pino, type Logger as PinoLogger } from 'pino';
import PinoPretty from 'pino-pretty';

export type Logger = PinoLogger;

/** LOG_FORMAT: json, pretty, or auto (pretty when standard output is a terminal, JSON otherwise). */
export type LogFormat = 'auto' | 'json' | 'pretty';
export const LOG_FORMATS: readonly LogFormat[] = ['auto', 'json', 'pretty'];

/**
 * Structured logs on stdout, one logger per process, passed explicitly through the context: JSON
 * lines, or on a terminal (LOG_FORMAT auto or pretty) the same records as readable lines through
 * pino-pretty (MIT), written synchronously in this thread so a crash loses none.
 */
export function createLogger(
  level: string,
  bindings: Record<string, unknown> = {},
  format: LogFormat = 'json',
): Logger {
  const opts = { level, base: { service: 'qr-service', ...bindings }, timestamp: pino.stdTimeFunctions.isoTime };
  const pretty = format === 'pretty' || (format === 'auto' && process.stdout.isTTY === true);
  if (!pretty) return pino(opts);
  return pino(
    opts,
    PinoPretty({
      colorize: process.stdout.isTTY === true,
      sync: true,
      translateTime: 'SYS:HH:MM:ss.l',
      ignore: 'service,hostname',
    }),
  );
}
