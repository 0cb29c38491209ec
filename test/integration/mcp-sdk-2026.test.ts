// The official MCP TypeScript SDK's 2.x client (@modelcontextprotocol/client), which speaks the
// stateless revision 2026-07-28, pinned to it against the running service: discovery, the tool list,
// a tool call, and a subscriptions/listen stream (the acknowledged filter, a close by the client, and
// the graceful end when the service stops). An implementation we do not write, with its own header
// mirroring (MCP-Protocol-Version, Mcp-Method, Mcp-Name) and result checks.
import { expect } from 'chai';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { startTestService, type TestService } from '../helpers/harness.js';

const V = '2026-07-28';

async function connect(svc: TestService, token: string): Promise<Client> {
  const client = new Client({ name: 'sdk-2026-test', version: '1.0.0' }, { versionNegotiation: { mode: { pin: V } } });
  const transport = new StreamableHTTPClientTransport(new URL(`${svc.url}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return client;
}

describe('the official MCP SDK 2.x client pinned to 2026-07-28', () => {
  let svc: TestService;
  let token: string;
  let orgUlid: string;
  before(async () => {
    svc = await startTestService();
    let org: { ulid: string };
    ({ token, org } = await svc.createOrg({ plan: 'business_monthly' }));
    orgUlid = org.ulid;
  });
  after(() => svc.close());

  it('discovers the server, lists the 25 tools and calls one, its structuredContent checked by the SDK', async () => {
    const client = await connect(svc, token);
    try {
      expect(client.getServerVersion()?.name).to.equal('qr-service');
      expect(client.getServerCapabilities()).to.deep.equal({ tools: { listChanged: false } });
      const { tools } = await client.listTools();
      expect(tools).to.have.length(25);
      const result = await client.callTool({ name: 'organization_read', arguments: {} });
      expect(result.isError).to.equal(false);
      expect((result.structuredContent as { data: { ulid: string } }).data.ulid).to.equal(orgUlid);
    } finally {
      await client.close();
    }
  });

  it('opens a listen stream: the server honours none of the filter (no list ever changes), and the client closes it', async () => {
    const client = await connect(svc, token);
    try {
      const sub = await client.listen({ toolsListChanged: true, resourcesListChanged: true });
      expect(sub.honoredFilter).to.deep.equal({});
      await sub.close();
      expect(await sub.closed).to.equal('local');
      // The connection still serves requests afterwards.
      expect((await client.listTools()).tools).to.have.length(25);
    } finally {
      await client.close();
    }
  });

  it('sees a listen stream end gracefully when the service stops', async () => {
    const own = await startTestService();
    try {
      const { token: t } = await own.createOrg({ plan: 'business_monthly' });
      const client = await connect(own, t);
      const sub = await client.listen({ toolsListChanged: true });
      const closing = own.close();
      expect(await sub.closed).to.equal('graceful');
      await closing;
      await client.close();
    } finally {
      await own.close().catch(() => undefined);
    }
  });
});
