// Runs Stryker for one module (MUTATION_MODULE; `make mutation` calls this once per module). The
// configuration, loaded here first, starts the one embedded Postgres of a run for the modules whose
// tests need the stores, in this process rather than in Stryker's: Stryker ends when its event loop
// is empty, and a Postgres child of its own kept it alive after the report was written.
import { spawnSync } from 'node:child_process';

// Loaded by a path in a variable: it is JavaScript without type declarations.
const config = './stryker.config.mjs';
await import(config); // sets TEST_DATABASE_URL, which Stryker's own load of it then reuses
const run = spawnSync('node_modules/.bin/stryker', ['run', 'test/mutation/stryker.config.mjs'], { stdio: 'inherit' });
// process.exit runs the 'exit' hook that stops Postgres (./postgres.ts).
process.exit(run.status ?? 1);
