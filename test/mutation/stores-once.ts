// Root hooks for mutation runs of modules whose tests need the stores: Stryker runs the same test
// files many times in one process, so the stores start on the first run and stay up (test/setup.ts
// would start and stop them around every run). Postgres is the one the Stryker process started
// (TEST_DATABASE_URL, see ./stryker.config.mjs); chDB lives in this process and ends with it.
import fs from 'node:fs';
import { startTestStores, testRoot } from '../helpers/stores.js';

export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(180_000);
    await startTestStores();
    const root = testRoot();
    process.once('exit', () => fs.rmSync(root, { recursive: true, force: true }));
  },
};
