// make docs-images (second half): the pictures of docs/dashboard.md are the screenshots the browser
// tests take (test/browser/*.test.ts write them to TEST_OUTPUT_DIR/screenshots, default
// var/test-output/screenshots). Copies every picture the page shows from there into
// docs/images/dashboard/, and names the ones no test has taken yet (run `make test-browser` first).
import fs from 'node:fs';
import path from 'node:path';

// docs/dashboard.md's pictures, and those of other pages that show the dashboard.
const DOCS = ['docs/dashboard.md', 'docs/pixels.md'].map((d) => path.resolve(d));
const DIR = path.resolve('docs/images/dashboard');
const SHOTS = path.resolve(process.env.TEST_OUTPUT_DIR ?? path.join('var', 'test-output'), 'screenshots');

const names = DOCS.flatMap((doc) =>
  [...fs.readFileSync(doc, 'utf8').matchAll(/\(images\/dashboard\/([a-z0-9-]+)\.png\)/g)].map((m) => m[1]),
);
const missing: string[] = [];
for (const name of new Set(names)) {
  const from = path.join(SHOTS, `${name}.png`);
  if (!fs.existsSync(from)) {
    missing.push(name);
    continue;
  }
  fs.copyFileSync(from, path.join(DIR, `${name}.png`));
  console.log(`docs/images/dashboard/${name}.png`);
}
if (missing.length) {
  console.error(`Not taken by a browser test yet (run make test-browser first): ${missing.join(', ')}`);
  process.exitCode = 1;
}
