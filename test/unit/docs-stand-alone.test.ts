// The README and docs/ stand alone: they never send a reader to a document outside the repository,
// and every relative link they hold resolves to a file in it.
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';

const root = path.resolve(import.meta.dirname, '../..');
const files = ['README.md', ...fs.readdirSync(path.join(root, 'docs')).map((f) => path.join('docs', f))].filter((f) =>
  f.endsWith('.md'),
);

describe('README and docs stand alone', () => {
  for (const file of files) {
    const text = fs.readFileSync(path.join(root, file), 'utf8');

    it(`${file} names no document outside the repository`, () => {
      for (const outside of [/interface\.md/i, /decisions\.md/i, /interface spec/i, /\.\.\/shared/, /\/work\//]) {
        expect(text, `${file} mentions ${outside}`).not.to.match(outside);
      }
    });

    it(`${file} links only to files that exist in the repository`, () => {
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/i.test(target) || target.startsWith('#')) continue;
        const file2 = path.resolve(path.dirname(path.join(root, file)), target.split('#')[0]);
        expect(file2.startsWith(root + path.sep), `${file} links outside: ${target}`).to.equal(true);
        expect(fs.existsSync(file2), `${file} links to a missing ${target}`).to.equal(true);
      }
    });
  }
});
