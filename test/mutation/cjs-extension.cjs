// Stryker's mocha runner (9.x, the last for Node 20) requires mocha's CLI helpers by extensionless
// path (`mocha/lib/cli/run-helpers`), which mocha 12 ships as `.cjs`. Node probes the extensions
// registered here, so registering `.cjs` like `.js` lets that require find them.
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a --require preload is CommonJS
const Module = require('node:module');
Module._extensions['.cjs'] ??= Module._extensions['.js'];
