// Mocha root hooks: the real embedded stores for the whole test process.
import { startTestStores, stopTestStores } from './helpers/stores.js';

export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(180_000);
    await startTestStores();
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(60_000);
    await stopTestStores();
  },
};
