// make docs-images (second half): the pictures of docs/dashboard.md, docs/pixels.md and
// docs/landing-pages.md are the screenshots the browser tests take (test/browser/*.test.ts write
// them to TEST_OUTPUT_DIR/screenshots; `make docs-images` runs them with TEST_OUTPUT_DIR=var/test-output
// first). Copies every picture the pages show from there into docs/images/dashboard/ and
// docs/images/landing/, and names the ones no test has taken.
import fs from 'node:fs';
import path from 'node:path';

if (!process.env.TEST_OUTPUT_DIR) throw new Error('TEST_OUTPUT_DIR: where the browser tests wrote their screenshots');
const SHOTS = path.resolve(process.env.TEST_OUTPUT_DIR, 'screenshots');

// Each page of docs and its folder of pictures, and the name of a picture's screenshot.
const PAGES = [
  { doc: 'docs/dashboard.md', dir: 'dashboard', shot: (name: string) => name },
  // Pages beyond docs/dashboard.md that show the dashboard.
  { doc: 'docs/pixels.md', dir: 'dashboard', shot: (name: string) => name },
  // test/browser/landing-pages.test.ts takes landing-<type>.png.
  { doc: 'docs/landing-pages.md', dir: 'landing', shot: (name: string) => `landing-${name}` },
];

const missing: string[] = [];
for (const { doc, dir, shot } of PAGES) {
  const text = fs.readFileSync(path.resolve(doc), 'utf8');
  const names = [...text.matchAll(new RegExp(`\\(images/${dir}/([a-z0-9-]+)\\.png\\)`, 'g'))].map((m) => m[1]);
  for (const name of new Set(names)) {
    const from = path.join(SHOTS, `${shot(name)}.png`);
    if (!fs.existsSync(from)) {
      missing.push(`${dir}/${name}`);
      continue;
    }
    fs.copyFileSync(from, path.resolve('docs/images', dir, `${name}.png`));
    console.log(`docs/images/${dir}/${name}.png`);
  }
}
if (missing.length) {
  console.error(`Not taken by a browser test: ${missing.join(', ')}`);
  process.exitCode = 1;
}
