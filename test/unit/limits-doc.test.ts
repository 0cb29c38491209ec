import fs from 'node:fs';
import { expect } from 'chai';
import { LIMITS_DOC, limitsDoc } from '../../server/cli/limits-doc.js';

describe('docs/limits.md', () => {
  it('lists exactly the field limits the request schemas enforce', () => {
    const doc = fs.readFileSync(LIMITS_DOC, 'utf8');
    expect(doc, 'regenerate with: npx tsx server/cli/limits-doc.ts').to.equal(limitsDoc(doc));
  });
});
