// Import rules of the architecture (docs/architecture.md), checked by `make lint` with
// dependency-cruiser. Type-only imports count: a type is a dependency too.
const ADAPTERS = '^server/(http|mcp|redirect|web|cli)/';
// Resource folders: one per kind of thing the service keeps, each with its rules and data.
const RESOURCES =
  '^server/(accounts|analytics|audit|brands|bulk-imports|domains|members|organizations|plans|qr-code-exports|' +
  'oauth|qr-codes|qr-styles|scan-alerts|scan-batches|status|tokens|wallet|webhooks)/';
// Shared modules every resource builds on; they know no resource.
const SHARED = '^server/((auth|metering|schemas|stores)/|(context|config|errors)[.]ts$)';
// Composition roots wire adapters to the core; nothing imports them back.
const ROOTS = '^server/(main|mounts)[.]ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      severity: 'error',
      comment: 'Imports form no cycle, type-only ones included.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'core-does-not-import-adapters',
      severity: 'error',
      comment:
        'Adapters (REST, MCP, redirect, web, CLI) depend on the core, never the reverse: the runner, the ' +
        'resource folders, the stores, the workers and the context know nothing of who calls them.',
      from: { path: '^(server|workers|clickhouse)/', pathNot: [ADAPTERS, ROOTS] },
      to: { path: [ADAPTERS, ROOTS] },
    },
    {
      name: 'adapters-do-not-import-each-other',
      severity: 'error',
      comment:
        'An adapter (REST, MCP, redirect, web, CLI) imports no other adapter. What several of them need ' +
        '(client address and trust lists, body reading, request state and logging, rendering a result) ' +
        'is in server/http-common/, which every adapter may use.',
      from: { path: ADAPTERS },
      to: { path: ADAPTERS, pathNot: '^server/$1/' },
    },
    {
      name: 'shared-modules-import-no-resource',
      severity: 'error',
      comment:
        'The shared modules (the context, config, errors, schemas, auth, metering, stores) import no resource ' +
        'folder, so no folder-level cycle runs through them. The context is a type; server/bootstrap.ts builds ' +
        'it with the resources it needs.',
      from: { path: SHARED },
      to: { path: RESOURCES },
    },
    {
      name: 'operations-runner-is-generic',
      severity: 'error',
      comment:
        'server/operations/ runs any operation; it names no resource (the list of every operation is ' +
        'server/all-operations.ts).',
      from: { path: '^server/operations/' },
      to: {
        path: '^server/',
        pathNot: [
          '^server/operations/',
          '^server/(auth|metering|schemas)/',
          '^server/(context|config|errors|logger|ids|metrics)[.]ts$',
        ],
      },
    },
    {
      name: 'stores-are-leaves',
      severity: 'error',
      comment: 'server/stores/ opens and migrates the databases; it knows no resource, runner or adapter.',
      from: { path: '^server/stores/' },
      to: { path: '^server/', pathNot: ['^server/stores/', '^server/(config|errors|logger)[.]ts$'] },
    },
    {
      name: 'migrations-are-frozen',
      severity: 'error',
      comment:
        'A released migration is frozen text: it imports no live code and no other migration, only the ' +
        'type of its argument (server/stores/migrate.ts).',
      from: { path: '^clickhouse/' },
      to: { path: '^(server|clickhouse|workers)/', pathNot: '^server/stores/migrate[.]ts$' },
    },
    {
      name: 'dashboard-is-a-client',
      severity: 'error',
      comment:
        'The dashboard (dashboard/) reaches the service only over HTTP: it imports no server, worker, migration, ' +
        'test or CLI code, not even a type. What it knows of the API (shapes, enum values) comes from ' +
        'dashboard/src/generated/openapi.d.ts, generated from the OpenAPI document by `make dashboard`.',
      from: { path: '^dashboard/' },
      to: { path: '^(server|workers|clickhouse|sql|test|bin)/' },
    },
    {
      name: 'nothing-imports-the-dashboard',
      severity: 'error',
      comment: 'The service serves the built dashboard (dashboard/dist) as files; no code imports its sources.',
      from: { path: '^(server|workers|clickhouse|test|bin)/' },
      to: { path: '^dashboard/' },
    },
    {
      name: 'dashboard-imports-resolve',
      severity: 'error',
      comment: 'Every import of the dashboard resolves (a missing generated file is `make dashboard` not run).',
      from: { path: '^dashboard/' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|var)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
