import fs from 'node:fs';
import { expect } from 'chai';
import { configDoc } from '../../server/cli/config-doc.js';

describe('docs/configuration.md', () => {
  it('lists exactly the configuration keys, defaults and help of server/config.ts', () => {
    expect(fs.readFileSync('docs/configuration.md', 'utf8')).to.equal(configDoc());
  });
});
