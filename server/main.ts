// `make start`: the service on the configured (by default embedded) stores: the API listener,
// the public redirect listener and graphile-worker in one process; each can be switched off. With
// REDIRECT_PROCESSES > 1 the redirect runs in that many forked processes instead.
import type { Runner } from 'graphile-worker';
import { boot } from './bootstrap.js';
import { apiBaseUrl, loadConfig } from './config.js';
import type { AppContext } from './context.js';
import { createLogger } from './logger.js';
import { onShutdown } from './process.js';
import type { ListenerName } from './readiness.js';
import { AlreadyRunning, ALREADY_RUNNING_EXIT, checkPortsFree, startProblemLine } from './start-problems.js';
import { isRedirectProcess } from './redirect/process-role.js';
import { Validators } from './schemas/validation.js';

/**
 * The listeners' and the worker's modules, imported while the stores start, and the operations'
 * request schemas compiled into `validators`: loading and compiling take a few seconds of this
 * thread, and starting the stores is mostly waiting for Postgres's processes (initdb on the first
 * start) and ClickHouse.
 */
async function servingModules(validators: Validators) {
  const [api, mounts, workers, listener, redirectCluster, leftovers, ops, execute] = await Promise.all([
    import('./http/api-app.js'),
    import('./mounts.js'),
    import('../workers/index.js'),
    import('./redirect/listener.js'),
    import('./redirect/cluster.js'),
    import('./redirect/leftovers.js'),
    import('./all-operations.js'),
    import('./operations/execute.js'),
  ]);
  execute.compileOperationSchemas(validators, ops.operations);
  return {
    createApiHandler: api.createApiHandler,
    listen: api.listen,
    apiMounts: mounts.apiMounts,
    startWorker: workers.startWorker,
    startRedirectListener: listener.startRedirectListener,
    startRedirectCluster: redirectCluster.startRedirectCluster,
    replayLegacyLeftovers: leftovers.replayLegacyLeftovers,
  };
}
type ServingModules = Awaited<ReturnType<typeof servingModules>>;

async function start(): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config.logLevel, {}, config.logFormat);
  // Before the stores: a second `make start` says so and touches nothing.
  await checkPortsFree(config);
  if (process.env.QR_PRINT_BANNER) {
    process.stderr.write(
      '==> Starting the service (the first start creates the embedded Postgres and ClickHouse under ./var and migrates them)\n',
    );
  }
  const validators = new Validators();
  const modules = servingModules(validators);
  modules.catch(() => undefined); // awaited below, once the stores are up
  const app = await boot(config, log, {
    collectDefaultMetrics: true,
    reconcileFallbacks: true,
    validators,
    // With REDIRECT_PROCESSES > 1 the redirect processes serve the scans and read the databases.
    preloadGeo: config.enableRedirect && config.redirectProcesses === 1,
  });
  try {
    await serve(app, await modules);
  } catch (err) {
    await app.close();
    throw err;
  }
  onShutdown(log, async () => {
    app.readiness.stop();
    await app.close();
  });
}

async function serve(app: AppContext, modules: ServingModules): Promise<void> {
  const { config, log } = app;
  const { createApiHandler, listen, apiMounts, startWorker, startRedirectListener } = modules;
  const { startRedirectCluster, replayLegacyLeftovers } = modules;
  // /readyz answers 503 until every listener of this process accepts.
  const listeners: ListenerName[] = [];
  if (config.enableApi) listeners.push('api');
  if (config.enableRedirect) listeners.push('redirect');
  if (config.enableRedirect && config.redirectTlsPort !== null) listeners.push('redirect_tls');
  app.readiness.expect(...listeners);

  // Render threads load while the listeners start, so the first image does not wait for them.
  if (config.enableApi || config.enableWorker) app.renders.warm();
  let runner: Runner | undefined;
  if (config.enableWorker) {
    runner = await startWorker(app);
    app.onClose(async () => runner?.stop());
  }
  if (config.enableApi) {
    const api = await listen(createApiHandler(app, { mounts: apiMounts }), config.apiPort, config.apiHost);
    app.setApiPort(api.port);
    app.readiness.listening('api', api.listening);
    app.onClose(() => api.close());
  }

  if (config.enableRedirect) {
    // It registers its own close last, so it closes first: the scan buffer drains while the stores
    // are still open.
    if (config.redirectProcesses > 1) await startRedirectCluster(app, config.redirectProcesses);
    else {
      await replayLegacyLeftovers(app);
      await startRedirectListener(app, config.redirectPort, config.redirectHost);
    }
  }

  const apiUrl = apiBaseUrl(config, app.apiPort());
  log.info(
    { api: config.enableApi ? apiUrl : null, redirect: config.enableRedirect ? config.fallbackOrigins[0] : null },
    'service started',
  );
  if (process.stdout.isTTY || process.env.QR_PRINT_BANNER) {
    process.stderr.write(
      `\nQR service is up.\n  API:      ${apiUrl}/v1/status   (OpenAPI: ${apiUrl}/v1/openapi.json)\n` +
        `  Redirect: ${config.fallbackOrigins[0]}/<org-slug>/<code-slug>\n` +
        `  Dashboard: ${apiUrl}/app   (sign in with the link qrctl org create prints)\n` +
        `Create a first organization and token in another terminal:\n` +
        `  npx qrctl org create --name "Acme" --slug acme --plan business_monthly --currency EUR --owner-email you@example.com\n` +
        `then: curl -H "Authorization: Bearer <token>" ${apiUrl}/v1/status\n` +
        `(README.md walks on from there: a first code, a scan, analytics and MCP.)\n\n`,
    );
  }
}

/** REDIRECT_PROCESSES > 1: this same file is each redirect process (server/redirect/cluster.ts). */
async function redirectProcess(): Promise<void> {
  await (await import('./redirect/cluster.js')).runRedirectProcess();
}

await (isRedirectProcess() ? redirectProcess() : start()).catch((err: unknown) => {
  const line = startProblemLine(err);
  if (line === null) throw err;
  process.stderr.write(`${line}\n`);
  process.exit(err instanceof AlreadyRunning ? ALREADY_RUNNING_EXIT : 1);
});
