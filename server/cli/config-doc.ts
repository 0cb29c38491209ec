// Prints docs/configuration.md from CONFIG_KEYS, so the documented keys and defaults cannot drift
// from the code (test/unit/config-doc.test.ts compares them).
import { CONFIG_KEYS } from '../config.js';

export function configDoc(): string {
  const rows = Object.values(CONFIG_KEYS).map(
    (k) => `| \`${k.env}\` | ${k.default === '' ? '(unset)' : `\`${k.default}\``} | ${k.help} |`,
  );
  return [
    '# Configuration',
    '',
    'Every setting is an environment variable, read once at start by `server/config.ts`. This page is',
    'generated from that file (`npx tsx server/cli/config-doc.ts > docs/configuration.md`).',
    '',
    '| variable | default | meaning |',
    '|---|---|---|',
    ...rows,
    '',
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) process.stdout.write(configDoc());
