// The official MCP Inspector's CLI, in --strict mode, lists our tools and reports no schema
// portability problem at all (no error, no warning): every inputSchema and outputSchema has one
// type per schema, so function-calling formats that allow one type per field take every tool.
import { expect } from 'chai';
import { TOOL_DEFS } from '../../server/mcp/catalog.js';
import { startTestService, type TestService } from '../helpers/harness.js';
import { inspectorHome, runInspector } from '../helpers/inspector.js';

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
    const args = [
      `${svc.url}/mcp`,
      '--transport',
      'http',
      '--header',
      `Authorization: Bearer ${token}`,
      '--method',
      'tools/list',
      '--strict',
    ];
    const { code, stdout, stderr } = await runInspector(args, inspectorHome('inspector-strict'));
    expect(code, `inspector exited ${code}:\n${stderr}\n${stdout.slice(0, 2000)}`).to.equal(0);
    expect(stderr, 'the Inspector’s findings').to.equal('');
    const listed = JSON.parse(stdout) as { tools: { name: string; outputSchema?: unknown }[] };
    expect(listed.tools.map((t) => t.name)).to.deep.equal(TOOL_DEFS.map((d) => d.name));
    expect(listed.tools.filter((t) => t.outputSchema).length).to.be.greaterThan(15);
  });
});
