// What keeps `make start` from starting, said in one line instead of a stack trace: a port that is
// taken (by this service already running, or by another program), a data directory another process
// holds, a configuration error, a database the migrations refuse (ahead of the code, or migrated
// from a file that has changed since).
import net from 'node:net';
import { apiBaseUrl, ConfigError, type Config } from './config.js';
import { ChdbBusyError } from './stores/clickhouse.js';
import { MigrationError } from './stores/migrate.js';

/** A reason the service cannot start that the person starting it can act on. */
class StartProblem extends Error {}

/** This service already runs on the configured ports: nothing to start (exit code ALREADY_RUNNING_EXIT). */
export class AlreadyRunning extends StartProblem {}

/** The exit code of a start that found the service already running (`make start` treats it as done). */
export const ALREADY_RUNNING_EXIT = 3;

/** Whether something accepts connections on host:port (a bind attempt would fail). */
function portTaken(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'EADDRINUSE' || err.code === 'EACCES'));
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve(false)));
  });
}

/** Whether this service answers /healthz at the URL (it is already running there). */
async function isOurService(baseUrl: string): Promise<boolean> {
  try {
    const res = await fetch(`${baseUrl}/healthz`, { signal: AbortSignal.timeout(2000) });
    const body = (await res.json()) as { status?: unknown };
    return res.ok && body.status === 'ok';
  } catch {
    return false;
  }
}

/** Refuses to start when a listener's port is taken, naming the port's setting and what holds it. */
export async function checkPortsFree(config: Config): Promise<void> {
  const wanted: { port: number; host: string; env: string }[] = [];
  if (config.enableApi) wanted.push({ port: config.apiPort, host: config.apiHost, env: 'API_PORT' });
  if (config.enableRedirect) {
    wanted.push({ port: config.redirectPort, host: config.redirectHost, env: 'REDIRECT_PORT' });
    if (config.redirectTlsPort !== null) {
      wanted.push({ port: config.redirectTlsPort, host: config.redirectHost, env: 'REDIRECT_TLS_PORT' });
    }
  }
  for (const w of wanted) {
    if (w.port === 0 || !(await portTaken(w.port, w.host))) continue;
    if (config.enableApi && (await isOurService(apiBaseUrl(config)))) {
      throw new AlreadyRunning(
        `the QR service is already running at ${apiBaseUrl(config)} (another \`make start\`?); ` +
          'stop it first (Ctrl-C in its terminal), or set API_PORT, REDIRECT_PORT and DATA_DIR to run a second one.',
      );
    }
    throw new StartProblem(
      `port ${w.port} on ${w.host} (${w.env}) is in use by another program; stop it or set ${w.env} to a free port.`,
    );
  }
}

/** The one line to print for an error that stops the start, or null when it is a bug (print it all). */
export function startProblemLine(err: unknown): string | null {
  if (
    err instanceof StartProblem ||
    err instanceof ChdbBusyError ||
    err instanceof ConfigError ||
    err instanceof MigrationError
  ) {
    return `qr-service cannot start: ${err.message}`;
  }
  const code = (err as NodeJS.ErrnoException | null)?.code;
  if (code === 'EADDRINUSE' || code === 'EACCES') {
    return `qr-service cannot start: ${(err as Error).message}; set API_PORT or REDIRECT_PORT to a free port.`;
  }
  return null;
}
