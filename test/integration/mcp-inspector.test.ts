// The official MCP Inspector's CLI, in --strict mode, lists our tools and reports no schema
// portability problem at all (no error, no warning): every inputSchema and outputSchema has one
// type per schema, so function-calling formats that allow one type per field take every tool.
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { TOOL_DEFS } from '../../server/mcp/catalog.js';
import { startTestService, type TestService } from '../helpers/harness.js';
import { testRoot } from '../helpers/stores.js';

const run = promisify(execFile);

describe('the MCP Inspector CLI in --strict mode', () => {
  let svc: TestService;
  let token: string;
  before(async () => {
    svc = await startTestService();
    token = (await svc.createOrg()).token;
  });
  after(() => svc.close());

  it('lists all 25 tools and reports no schema finding', async function () {
    this.timeout(120_000);
    // The Inspector keeps a catalog under HOME; give it one of its own.
    const home = path.join(testRoot(), 'inspector-home');
    await fs.mkdir(home, { recursive: true });
    const bin = path.resolve('node_modules/.bin/inspector');
    const args = [
      '--cli',
      `${svc.url}/mcp`,
      '--transport',
      'http',
      '--header',
      `Authorization: Bearer ${token}`,
      '--method',
      'tools/list',
      '--strict',
    ];
    const { stdout, stderr } = await run(bin, args, { env: { ...process.env, HOME: home }, timeout: 90_000 }).catch(
      (e: { code: number; stdout: string; stderr: string }) =>
        expect.fail(`inspector exited ${e.code}:\n${e.stderr}\n${e.stdout.slice(0, 2000)}`),
    );
    expect(stderr, 'the Inspector’s findings').to.equal('');
    const listed = JSON.parse(stdout) as { tools: { name: string; outputSchema?: unknown }[] };
    expect(listed.tools.map((t) => t.name)).to.deep.equal(TOOL_DEFS.map((d) => d.name));
    expect(listed.tools.filter((t) => t.outputSchema).length).to.be.greaterThan(15);
  });
});
