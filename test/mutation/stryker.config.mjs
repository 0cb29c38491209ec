// Mutation testing (`make mutation`): Stryker changes one core rule module at a time (a `<` into a
// `<=`, a condition into `true`, ...) and runs only the test files that cover that module; a
// mutant no test notices "survives". A module scoring below thresholds.break fails the run.
// MUTATION_MODULE picks the module (the Makefile runs them one after another).

/** stores: the test files need the embedded Postgres and chDB (started once per run, ./stores-once.ts). */
export const MODULES = {
  routing: { mutate: ['server/qr-codes/routing.ts'], spec: ['test/unit/redirect-rules.test.ts'] },
  money: { mutate: ['server/wallet/money.ts'], spec: ['test/unit/money.test.ts'] },
  hostname: { mutate: ['server/domains/hostname.ts'], spec: ['test/unit/hostname.test.ts'] },
  abilities: { mutate: ['server/auth/abilities.ts'], spec: ['test/unit/abilities.test.ts'] },
  'http-url': { mutate: ['server/schemas/http-url.ts'], spec: ['test/unit/http-url.test.ts'] },
  scannability: { mutate: ['server/rendering/scannability.ts'], spec: ['test/unit/scannability.test.ts'] },
  'scan-buffer': {
    mutate: ['server/redirect/scan-buffer.ts'],
    // scan-journal: the journal and replay of a redirect process of several (REDIRECT_PROCESSES).
    spec: ['test/integration/scan-buffer.test.ts', 'test/integration/scan-journal.test.ts'],
    stores: true,
    // Its tests wait for nothing (backoffs are recorded, not slept), so a mutant that stalls a flush
    // is known to hang after a few seconds.
    timeoutMS: 6_000,
  },
  // The arithmetic of admission and metering (limits, headers, what each call of a batch learns);
  // the group commit around it (admission.ts) is covered by the rate-limit and metering
  // integration tests, whose mutants stall the admission queue and each wait out the timeout.
  admission: { mutate: ['server/metering/admission-rules.ts'], spec: ['test/unit/admission-rules.test.ts'] },
};

const name = process.env.MUTATION_MODULE ?? '';
const module = MODULES[name];
if (!module) throw new Error(`MUTATION_MODULE must be one of: ${Object.keys(MODULES).join(', ')}`);

if (module.stores && !process.env.TEST_DATABASE_URL) {
  // The test runner processes inherit it (test/helpers/stores.ts uses a Postgres server when set).
  const { startMutationPostgres } = await import('./postgres.ts');
  process.env.TEST_DATABASE_URL = await startMutationPostgres();
}

export default {
  testRunner: 'mocha',
  // Our mocha options spelled out rather than read from .mocharc.json, whose root hooks start the
  // stores: only the modules that need them get them.
  mochaOptions: {
    'no-config': true,
    'no-package': true,
    spec: module.spec,
    extension: ['ts'],
    require: module.stores ? ['test/mutation/stores-once.ts'] : [],
    'async-only': false,
  },
  testRunnerNodeArgs: ['--require', './test/mutation/cjs-extension.cjs', '--import', 'tsx'],
  mutate: module.mutate,
  coverageAnalysis: 'perTest',
  // The machine is shared; one test process at a time.
  concurrency: 1,
  // Added to the time a test took in the first run before a mutant counts as hanging (killed).
  timeoutMS: module.timeoutMS ?? 15_000,
  thresholds: { high: 95, low: 85, break: 85 },
  reporters: ['clear-text', 'progress', 'json'],
  jsonReporter: { fileName: `var/mutation/${name}.json` },
  tempDirName: 'var/stryker-tmp',
  cleanTempDir: 'always',
  ignorePatterns: ['/var', '/dashboard', '/docs', '/.ci', '/test/bench', '/test/browser'],
};
