// Mocha root hooks: the real embedded stores for the whole test process.
import { checkedExchanges } from './helpers/conformance.js';
import { startTestStores, stopTestStores } from './helpers/stores.js';

export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(180_000);
    await startTestStores();
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(60_000);
    await stopTestStores();
    if (checkedExchanges.size) {
      const answers = [...checkedExchanges.values()].reduce((a, b) => a + b, 0);
      console.log(
        `  OpenAPI conformance (Prism): ${answers} answers of ${checkedExchanges.size} operations matched the document.`,
      );
    }
  },
};
