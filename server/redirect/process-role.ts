// Whether this process is one of the redirect processes startRedirectCluster (./cluster.ts) forks
// with REDIRECT_PROCESSES > 1: a module of its own, so that server/main.ts can ask before it loads
// the redirect's modules.
import cluster from 'node:cluster';

/** The environment a redirect process is forked with. */
export const REDIRECT_PROCESS_ENV = { QR_REDIRECT_PROCESS: '1' } as const;

export function isRedirectProcess(): boolean {
  return cluster.isWorker && process.env.QR_REDIRECT_PROCESS === REDIRECT_PROCESS_ENV.QR_REDIRECT_PROCESS;
}
