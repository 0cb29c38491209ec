// Runs Stryker for one module (MUTATION_MODULE; `make mutation` calls this once per module; extra
// arguments go to `stryker run`). The configuration, loaded here first, starts the one embedded
// Postgres of a run for the modules whose tests need the stores, in this process rather than in
// Stryker's: Stryker ends when its event loop is empty, and a Postgres child of its own kept it
// alive after the report was written. Stryker runs as a child, asynchronously, so that this
// process keeps reading Postgres's output meanwhile.
import { spawn } from 'node:child_process';

// Loaded by a path in a variable: it is JavaScript without type declarations.
const config = './stryker.config.mjs';
await import(config); // sets TEST_DATABASE_URL, which Stryker's own load of it then reuses
const stryker = spawn(
  'node_modules/.bin/stryker',
  ['run', 'test/mutation/stryker.config.mjs', ...process.argv.slice(2)],
  {
    stdio: 'inherit',
  },
);
const code = await new Promise<number>((resolve) => stryker.on('exit', (status) => resolve(status ?? 1)));
// process.exit runs the 'exit' hook that stops Postgres (./postgres.ts).
process.exit(code);
