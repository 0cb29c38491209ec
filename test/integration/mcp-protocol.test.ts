import fs from 'node:fs';
import http from 'node:http';
import { expect } from 'chai';
import { Ajv2020 } from 'ajv/dist/2020.js';
import * as sdkTypes from '@modelcontextprotocol/sdk/types.js';
import { startTestService, type TestService } from '../helpers/harness.js';
import { waitFor } from '../helpers/poll.js';
import {
  isStateless,
  LATEST_PROTOCOL_VERSION,
  MAX_BATCH,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '../../server/mcp/protocol.js';
import { LISTEN_STREAMS_PER_ORG } from '../../server/mcp/subscriptions.js';
import { comparableHeaders, postMcp, rpc, STATELESS_VERSION, statelessMeta, statelessRpc } from './mcp-helpers.js';

// MCP 2026-07-28's own JSON Schema (test/fixtures/mcp-2026-07-28), an implementation we do not write.
const spec = new Ajv2020({ strict: false, allErrors: true });
spec.addSchema(
  JSON.parse(fs.readFileSync(new URL('../fixtures/mcp-2026-07-28/schema.json', import.meta.url), 'utf8')),
  'mcp',
);
let lastSpecErrors = '';
function specValid(definition: string, value: unknown): boolean {
  const ok = spec.validate({ $ref: `mcp#/$defs/${definition}` }, value);
  lastSpecErrors = JSON.stringify(spec.errors ?? []).slice(0, 2000);
  return ok;
}
const specErrors = () => lastSpecErrors;

describe('MCP protocol over POST /mcp', () => {
  let svc: TestService;
  let token: string;
  before(async () => {
    svc = await startTestService();
    ({ token } = await svc.createOrg({ plan: 'business_monthly' }));
  });
  after(() => svc.close());

  describe('version negotiation', () => {
    it('supports the stateless 2026-07-28 revision plus exactly the versions of the installed official SDK', () => {
      expect(LATEST_PROTOCOL_VERSION).to.equal('2026-07-28');
      expect(SUPPORTED_PROTOCOL_VERSIONS.filter((v) => !isStateless(v))).to.deep.equal(
        sdkTypes.SUPPORTED_PROTOCOL_VERSIONS.filter((v) => !isStateless(v)),
      );
      expect(SUPPORTED_PROTOCOL_VERSIONS.filter((v) => !isStateless(v))[0]).to.equal(sdkTypes.LATEST_PROTOCOL_VERSION);
    });

    for (const version of SUPPORTED_PROTOCOL_VERSIONS) {
      it(`answers initialize for ${version} with that version, the tools capability and serverInfo`, async () => {
        const res = await rpc(svc, token, 'initialize', {
          protocolVersion: version,
          capabilities: {},
          clientInfo: { name: 'raw', version: '1' },
        });
        expect(res.status).to.equal(200);
        expect(res.headers.get('content-type')).to.match(/^application\/json/);
        expect(res.body.result.protocolVersion).to.equal(version);
        expect(res.body.result.capabilities).to.deep.equal({ tools: { listChanged: false } });
        expect(res.body.result.serverInfo).to.deep.equal({
          name: 'qr-service',
          title: 'QR code service',
          version: 'v1',
        });
        expect(res.body.result.instructions).to.include('confirmation_id');
      });
    }

    it('answers an unknown requested version with the latest supported one', async () => {
      const res = await rpc(svc, token, 'initialize', {
        protocolVersion: '2099-01-01',
        capabilities: {},
        clientInfo: { name: 'x', version: '1' },
      });
      expect(res.body.result.protocolVersion).to.equal('2025-11-25');
    });

    it('refuses initialize without a protocolVersion with -32602', async () => {
      const res = await rpc(svc, token, 'initialize', { capabilities: {} });
      expect(res.status).to.equal(200);
      expect(res.body.error.code).to.equal(-32602);
    });

    for (const bad of ['1900-01-01', '2099-01-01', 'not-a-version']) {
      it(`answers 400 to an unsupported MCP-Protocol-Version header (${bad})`, async () => {
        const res = await rpc(svc, token, 'tools/list', {}, { 'MCP-Protocol-Version': bad });
        expect(res.status).to.equal(400);
        expect(res.body.jsonrpc).to.equal('2.0');
        expect(res.body.id).to.equal(null);
        expect(res.body.error.message).to.include(bad);
      });
    }

    it('serves a request carrying a supported MCP-Protocol-Version header', async () => {
      const res = await rpc(svc, token, 'ping', undefined, { 'MCP-Protocol-Version': '2025-06-18' });
      expect(res.status).to.equal(200);
      expect(res.body.result).to.deep.equal({});
    });
  });

  describe('the stateless revision 2026-07-28', () => {
    const V = STATELESS_VERSION;
    const meta = statelessMeta;
    const call = (method: string, params?: Record<string, unknown>, headers?: Record<string, string>) =>
      statelessRpc(svc, token, method, params, headers);

    it('answers server/discover with every supported version, the capabilities and serverInfo, without initialize', async () => {
      const res = await call('server/discover');
      expect(res.status, res.text).to.equal(200);
      expect(res.body.result.supportedVersions).to.deep.equal([...SUPPORTED_PROTOCOL_VERSIONS]);
      expect(res.body.result.supportedVersions).to.include.members([V, '2025-11-25', '2025-06-18']);
      expect(res.body.result.capabilities).to.deep.equal({ tools: { listChanged: false } });
      expect(res.body.result.serverInfo.name).to.equal('qr-service');
    });

    it('serves tools/list and tools/call with the version, client info and capabilities in _meta', async () => {
      const list = await call('tools/list');
      expect(list.status).to.equal(200);
      expect(list.body.result.tools).to.have.length(25);
      const res = await call('tools/call', { name: 'organization_read', arguments: {} });
      expect(res.status).to.equal(200);
      expect(res.body.result.isError).to.equal(false);
      expect(res.body.result.structuredContent).to.have.property('data');
    });

    it('answers results the revision’s own schema accepts: resultType complete, serverInfo in _meta, and public caching hints on server/discover and tools/list', async () => {
      const discover = (await call('server/discover')).body.result;
      expect(specValid('DiscoverResult', discover)).to.equal(true, specErrors());
      expect(discover).to.deep.include({ resultType: 'complete', ttlMs: 300_000, cacheScope: 'public' });
      expect(discover._meta['io.modelcontextprotocol/serverInfo'].name).to.equal('qr-service');
      const list = (await call('tools/list')).body.result;
      expect(specValid('ListToolsResult', list)).to.equal(true, specErrors());
      expect(list).to.deep.include({ resultType: 'complete', ttlMs: 300_000, cacheScope: 'public' });
      for (const args of [{}, { code_ulid: 'nope' }]) {
        const name = Object.keys(args).length ? 'codes_read' : 'organization_read';
        const result = (await call('tools/call', { name, arguments: args })).body.result;
        expect(specValid('CallToolResult', result)).to.equal(true, specErrors());
        expect(result.resultType).to.equal('complete');
        expect(result).to.not.have.any.keys('ttlMs', 'cacheScope'); // a tool call is not cacheable
      }
      // Earlier revisions keep their result shapes.
      const old = (await rpc(svc, token, 'tools/list', {}, { 'MCP-Protocol-Version': '2025-11-25' })).body.result;
      expect(old).to.not.have.any.keys('resultType', 'ttlMs', 'cacheScope');
    });

    it('refuses a request without _meta, or with part of it, with 400 and -32602', async () => {
      const headers = { 'MCP-Protocol-Version': V, 'Mcp-Method': 'tools/list' };
      for (const params of [{}, { _meta: { 'io.modelcontextprotocol/protocolVersion': V } }]) {
        const res = await rpc(svc, token, 'tools/list', params, headers);
        expect(res.status, JSON.stringify(params)).to.equal(400);
        expect(res.body.error.code).to.equal(-32602);
        expect(res.body.id).to.be.a('number');
      }
    });

    it('refuses an unsupported _meta protocol version with 400, -32022 (UnsupportedProtocolVersionError) and the supported versions', async () => {
      const res = await call('tools/list', {
        _meta: { ...meta, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' },
      });
      expect(res.status).to.equal(400);
      expect(res.body.error.code).to.equal(-32022);
      expect(res.body.error.data).to.deep.equal({
        supported: [...SUPPORTED_PROTOCOL_VERSIONS],
        requested: '2099-01-01',
      });
      expect(specValid('UnsupportedProtocolVersionError', res.body)).to.equal(true, specErrors());
    });

    const mismatches: [string, string, Record<string, unknown>, Record<string, string>][] = [
      [
        'an MCP-Protocol-Version header that differs from _meta',
        'tools/list',
        {},
        { 'MCP-Protocol-Version': '2025-11-25' },
      ],
      ['no MCP-Protocol-Version header', 'tools/list', {}, { 'MCP-Protocol-Version': '' }],
      ['no Mcp-Method header', 'tools/list', {}, { 'Mcp-Method': '' }],
      ['an Mcp-Method header naming another method', 'tools/list', {}, { 'Mcp-Method': 'tools/call' }],
      [
        'an Mcp-Method header in another case (values are case-sensitive)',
        'tools/list',
        {},
        { 'Mcp-Method': 'Tools/List' },
      ],
      ['a tools/call without Mcp-Name', 'tools/call', { name: 'codes_list', arguments: {} }, { 'Mcp-Name': '' }],
      [
        'an Mcp-Name naming another tool',
        'tools/call',
        { name: 'codes_list', arguments: {} },
        { 'Mcp-Name': 'codes_delete' },
      ],
      [
        'a malformed Base64 Mcp-Name',
        'tools/call',
        { name: 'codes_list', arguments: {} },
        { 'Mcp-Name': '=?base64?@@@?=' },
      ],
    ];
    for (const [what, method, params, headers] of mismatches) {
      it(`refuses ${what} with 400 and -32020 (HeaderMismatch), executing nothing`, async () => {
        const res = await call(method, params, headers);
        expect(res.status, res.text).to.equal(400);
        expect(res.body.error.code).to.equal(-32020);
        expect(specValid('HeaderMismatchError', res.body)).to.equal(true, specErrors());
      });
    }

    it('takes an Mcp-Name in the revision’s Base64 form', async () => {
      const encoded = `=?base64?${Buffer.from('organization_read').toString('base64')}?=`;
      const res = await call('tools/call', { name: 'organization_read', arguments: {} }, { 'Mcp-Name': encoded });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.result.isError).to.equal(false);
    });

    it('answers ping, removed in this revision, and unknown methods with 404 and -32601', async () => {
      for (const method of ['ping', 'resources/list']) {
        const res = await call(method);
        expect(res.status, method).to.equal(404);
        expect(res.body.error.code).to.equal(-32601);
      }
    });

    describe('subscriptions/listen', () => {
      /**
       * Opens a listen stream over node:http (its own connection, so that abort() surely closes
       * it); returns the response and a reader of its SSE messages.
       */
      async function listen(
        target: TestService,
        bearer: string,
        id: number | string,
        notifications: unknown,
        headers: Record<string, string> = {},
      ) {
        const payload = JSON.stringify({
          jsonrpc: '2.0',
          id,
          method: 'subscriptions/listen',
          params: { _meta: meta, notifications },
        });
        const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
          const req = http.request(`${target.url}/mcp`, {
            method: 'POST',
            agent: false,
            headers: {
              Authorization: `Bearer ${bearer}`,
              Accept: 'application/json, text/event-stream',
              'Content-Type': 'application/json',
              'MCP-Protocol-Version': V,
              'Mcp-Method': 'subscriptions/listen',
              ...headers,
            },
          });
          req.on('response', resolve).on('error', reject).end(payload);
        });
        res.setEncoding('utf8');
        let chunks: AsyncIterator<string> | undefined;
        let buffer = '';
        /** The next `data:` message, or null at the end of the stream. */
        const next = async (): Promise<any> => {
          for (;;) {
            const end = buffer.indexOf('\n\n');
            if (end >= 0) {
              const event = buffer.slice(0, end);
              buffer = buffer.slice(end + 2);
              const data = event
                .split('\n')
                .filter((l) => l.startsWith('data:'))
                .map((l) => l.slice(5).trimStart());
              if (data.length) return JSON.parse(data.join('\n'));
              continue;
            }
            chunks ??= res[Symbol.asyncIterator]();
            const { value, done } = await chunks.next();
            if (done) return null;
            buffer += value;
          }
        };
        const type = String(res.headers['content-type'] ?? '');
        let json: any;
        if (type.startsWith('application/json')) {
          let text = '';
          for await (const c of res) text += c;
          json = JSON.parse(text);
        }
        return { res, status: res.statusCode!, type, json, next, abort: () => res.destroy() };
      }

      it('answers an event stream whose first message acknowledges the filter with the subset honoured (none: no list ever changes) and the subscription id', async () => {
        const s = await listen(svc, token, 7, {
          toolsListChanged: true,
          promptsListChanged: true,
          resourcesListChanged: true,
          resourceSubscriptions: ['https://example.com/x'],
        });
        expect(s.status).to.equal(200);
        expect(s.type).to.match(/^text\/event-stream/);
        expect(s.res.headers['x-accel-buffering']).to.equal('no');
        const ack = await s.next();
        expect(specValid('SubscriptionsAcknowledgedNotification', ack)).to.equal(true, specErrors());
        expect(ack).to.deep.equal({
          jsonrpc: '2.0',
          method: 'notifications/subscriptions/acknowledged',
          params: { _meta: { 'io.modelcontextprotocol/subscriptionId': 7 }, notifications: {} },
        });
        s.abort();
      });

      it('ends every open stream gracefully when the service stops: the listen request’s result, carrying the subscription id', async () => {
        const own = await startTestService();
        const { token: t } = await own.createOrg({ plan: 'business_monthly' });
        try {
          const s = await listen(own, t, 'sub-1', { toolsListChanged: true });
          expect((await s.next()).method).to.equal('notifications/subscriptions/acknowledged');
          const closing = own.close();
          const end = await s.next();
          expect(specValid('SubscriptionsListenResultResponse', end)).to.equal(true, specErrors());
          expect(end.id).to.equal('sub-1');
          expect(end.result.resultType).to.equal('complete');
          expect(end.result._meta['io.modelcontextprotocol/subscriptionId']).to.equal('sub-1');
          expect(end.result._meta['io.modelcontextprotocol/serverInfo'].name).to.equal('qr-service');
          expect(await s.next()).to.equal(null);
          await closing;
        } finally {
          await own.close().catch(() => undefined);
        }
      });

      for (const [what, notifications] of [
        ['no filter', undefined],
        ['a filter that is not an object', ['toolsListChanged']],
        ['a non-boolean toolsListChanged', { toolsListChanged: 'yes' }],
        ['resourceSubscriptions that are not strings', { resourceSubscriptions: [1] }],
      ] as [string, unknown][]) {
        it(`refuses ${what} with -32602`, async () => {
          const res = await call('subscriptions/listen', notifications === undefined ? {} : { notifications });
          expect(res.body.error.code, res.text).to.equal(-32602);
        });
      }

      it('refuses an Mcp-Method that is not subscriptions/listen with -32020', async () => {
        const s = await listen(svc, token, 8, {}, { 'Mcp-Method': 'tools/list' });
        expect(s.status).to.equal(400);
        expect(s.json.error.code).to.equal(-32020);
      });

      it('is not a method of earlier revisions (their server stream was GET, which is 405)', async () => {
        const res = await rpc(
          svc,
          token,
          'subscriptions/listen',
          { notifications: {} },
          {
            'MCP-Protocol-Version': '2025-11-25',
          },
        );
        expect(res.status).to.equal(200);
        expect(res.body.error.code).to.equal(-32601);
      });

      it(`holds at most ${LISTEN_STREAMS_PER_ORG} open streams per organization on a process, then 429`, async () => {
        const { token: t } = await svc.createOrg({ plan: 'business_monthly' });
        const open = [];
        for (let i = 0; i < LISTEN_STREAMS_PER_ORG; i++) {
          const s = await listen(svc, t, i, {});
          expect(s.status).to.equal(200);
          await s.next();
          open.push(s);
        }
        const refused = await listen(svc, t, 99, {});
        expect(refused.status).to.equal(429);
        // Another organization is not affected.
        const other = await listen(svc, token, 100, {});
        expect(other.status).to.equal(200);
        other.abort();
        // A stream the client closes frees its place.
        open.pop()!.abort();
        const again = await waitFor(
          () => listen(svc, t, 101, {}),
          (x) => x.status === 200,
        );
        expect(again.status).to.equal(200);
        again.abort();
        for (const s of open) s.abort();
      });
    });
  });

  describe('lifecycle and basic methods', () => {
    it('acknowledges notifications/initialized with 202 and no body', async () => {
      const res = await postMcp(svc, token, { jsonrpc: '2.0', method: 'notifications/initialized' });
      expect(res.status).to.equal(202);
      expect(res.text).to.equal('');
    });

    it('acknowledges any notification and a client response with 202 without executing a notified tools/call', async () => {
      const before = (await svc.get('/v1/status', token)).body.api.calls_used_month;
      for (const msg of [
        { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } },
        { jsonrpc: '2.0', method: 'tools/call', params: { name: 'organization_read', arguments: {} } },
        { jsonrpc: '2.0', id: 7, result: {} },
      ]) {
        const res = await postMcp(svc, token, msg);
        expect(res.status, JSON.stringify(msg)).to.equal(202);
        expect(res.text).to.equal('');
      }
      const status = await svc.get('/v1/status', token);
      expect(status.body.api.calls_used_month).to.equal(before);
    });

    it('answers ping with an empty result and echoes string ids', async () => {
      const res = await postMcp(svc, token, { jsonrpc: '2.0', id: 'abc-1', method: 'ping' });
      expect(res.body).to.deep.equal({ jsonrpc: '2.0', id: 'abc-1', result: {} });
    });

    it('accepts the Accept header of the official client', async () => {
      const res = await rpc(svc, token, 'ping', undefined, { Accept: 'application/json, text/event-stream' });
      expect(res.status).to.equal(200);
      expect(res.body.result).to.deep.equal({});
    });

    it('answers 406 when the client accepts only an event stream', async () => {
      const res = await rpc(svc, token, 'ping', undefined, { Accept: 'text/event-stream' });
      expect(res.status).to.equal(406);
      expect(res.body.error.code).to.equal(-32000);
    });

    it('answers GET and DELETE /mcp with 405 and Allow: POST', async () => {
      for (const method of ['GET', 'DELETE']) {
        const res = await fetch(`${svc.url}/mcp`, {
          method,
          headers: { Authorization: `Bearer ${token}`, Accept: 'text/event-stream' },
        });
        expect(res.status, method).to.equal(405);
        expect(res.headers.get('allow')).to.equal('POST');
        expect(await res.json()).to.deep.equal({ message: 'Method not allowed.', code: 'method_not_allowed' });
      }
    });
  });

  describe('Origin', () => {
    it('refuses a foreign Origin with 403, an empty one included (present is what counts)', async () => {
      for (const origin of ['https://evil.example', 'null', 'http://localhost.evil.example', '']) {
        const res = await rpc(svc, token, 'ping', undefined, { Origin: origin });
        expect(res.status, origin).to.equal(403);
        expect(res.body.error.code).to.equal(-32000);
      }
    });

    it('refuses an Origin naming the API host itself, as DNS rebinding produces, when none is configured', async () => {
      const res = await rpc(svc, token, 'ping', undefined, { Origin: svc.url });
      expect(res.status).to.equal(403);
      expect(res.body.error.message).to.match(/MCP_ALLOWED_ORIGINS/);
    });

    it('accepts only the configured origins', async () => {
      const other = await startTestService({ config: { mcpAllowedOrigins: ['https://app.example.com'] } });
      try {
        const t = (await other.createOrg()).token;
        const ok = await rpc(other, t, 'ping', undefined, { Origin: 'https://app.example.com' });
        expect([ok.status, ok.body.result]).to.deep.equal([200, {}]);
        expect(
          (await rpc(other, t, 'ping', undefined, { Origin: 'https://app.example.com.evil.test' })).status,
        ).to.equal(403);
        expect((await rpc(other, t, 'ping', undefined, { Origin: other.url })).status).to.equal(403);
      } finally {
        await other.close();
      }
    });
  });

  describe('malformed JSON-RPC', () => {
    const cases: { name: string; body: string; status: number; code: number; id?: unknown }[] = [
      { name: 'invalid JSON', body: '{"jsonrpc": "2.0", "id": 1, "method": ', status: 400, code: -32700, id: null },
      { name: 'an empty body', body: '', status: 400, code: -32700, id: null },
      { name: 'a number', body: '42', status: 400, code: -32600, id: null },
      { name: 'a string', body: '"x"', status: 400, code: -32600, id: null },
      { name: 'null', body: 'null', status: 400, code: -32600, id: null },
      { name: 'no jsonrpc member', body: '{"id": 3, "method": "ping"}', status: 400, code: -32600, id: 3 },
      { name: 'jsonrpc 1.0', body: '{"jsonrpc": "1.0", "id": 4, "method": "ping"}', status: 400, code: -32600, id: 4 },
      { name: 'no method', body: '{"jsonrpc": "2.0", "id": 5}', status: 400, code: -32600, id: 5 },
      { name: 'a numeric method', body: '{"jsonrpc": "2.0", "id": 6, "method": 12}', status: 400, code: -32600, id: 6 },
      {
        name: 'a null id',
        body: '{"jsonrpc": "2.0", "id": null, "method": "ping"}',
        status: 400,
        code: -32600,
        id: null,
      },
      {
        name: 'an object id',
        body: '{"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}',
        status: 400,
        code: -32600,
        id: null,
      },
      {
        name: 'by-position params',
        body: '{"jsonrpc": "2.0", "id": 8, "method": "ping", "params": [1]}',
        status: 200,
        code: -32602,
        id: 8,
      },
      {
        name: 'an unknown method',
        body: '{"jsonrpc": "2.0", "id": 9, "method": "resources/list"}',
        status: 200,
        code: -32601,
        id: 9,
      },
      {
        name: 'a prototype method name',
        body: '{"jsonrpc": "2.0", "id": 10, "method": "constructor"}',
        status: 200,
        code: -32601,
        id: 10,
      },
      {
        name: 'tools/call without a name',
        body: '{"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": {}}',
        status: 200,
        code: -32602,
        id: 11,
      },
      {
        name: 'tools/call of an unknown tool',
        body: '{"jsonrpc": "2.0", "id": 12, "method": "tools/call", "params": {"name": "tokens_create", "arguments": {}}}',
        status: 200,
        code: -32602,
        id: 12,
      },
      {
        name: 'tools/call with array arguments',
        body: '{"jsonrpc": "2.0", "id": 13, "method": "tools/call", "params": {"name": "status_read", "arguments": []}}',
        status: 200,
        code: -32602,
        id: 13,
      },
      {
        name: 'tools/call with string arguments',
        body: '{"jsonrpc": "2.0", "id": 14, "method": "tools/call", "params": {"name": "status_read", "arguments": "x"}}',
        status: 200,
        code: -32602,
        id: 14,
      },
      { name: 'an empty batch', body: '[]', status: 400, code: -32600, id: null },
    ];
    for (const c of cases) {
      it(`answers ${c.name} with ${c.code} (HTTP ${c.status})`, async () => {
        const res = await postMcp(svc, token, c.body);
        expect(res.status, res.text).to.equal(c.status);
        expect(res.body.jsonrpc).to.equal('2.0');
        expect(res.body.id).to.deep.equal(c.id);
        expect(res.body.error.code).to.equal(c.code);
        expect(res.body.error.message).to.be.a('string').and.not.equal('');
        expect(res.body).to.not.have.property('result');
      });
    }

    it('answers a non-JSON Content-Type with 415 like REST', async () => {
      const res = await postMcp(svc, token, '{"jsonrpc":"2.0","id":1,"method":"ping"}', {
        'Content-Type': 'text/plain',
      });
      expect(res.status).to.equal(415);
      expect(res.body.code).to.equal('unsupported_media_type');
    });
  });

  describe('batches', () => {
    it('answers a batch in order for a client speaking 2025-03-26 (the default without a header)', async () => {
      const res = await postMcp(svc, token, [
        { jsonrpc: '2.0', id: 1, method: 'ping' },
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        { jsonrpc: '2.0', id: 2, method: 'nope' },
        42,
        { jsonrpc: '2.0', id: 3, method: 'tools/list' },
      ]);
      expect(res.status).to.equal(200);
      expect(res.body).to.have.length(4);
      expect(res.body[0]).to.deep.equal({ jsonrpc: '2.0', id: 1, result: {} });
      expect(res.body[1].error.code).to.equal(-32601);
      expect(res.body[2]).to.deep.include({ id: null });
      expect(res.body[2].error.code).to.equal(-32600);
      expect(res.body[3].id).to.equal(3);
      expect(res.body[3].result.tools).to.be.an('array');
    });

    it('answers a batch of notifications with 202', async () => {
      const res = await postMcp(svc, token, [{ jsonrpc: '2.0', method: 'notifications/initialized' }], {
        'MCP-Protocol-Version': '2025-03-26',
      });
      expect(res.status).to.equal(202);
      expect(res.text).to.equal('');
    });

    it('refuses initialize inside a batch', async () => {
      const res = await postMcp(svc, token, [
        { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26' } },
      ]);
      expect(res.body[0].error.code).to.equal(-32600);
    });

    it(`refuses a batch of more than ${MAX_BATCH} messages`, async () => {
      const batch = Array.from({ length: MAX_BATCH + 1 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'ping' }));
      const res = await postMcp(svc, token, batch);
      expect(res.status).to.equal(400);
      expect(res.body.error.code).to.equal(-32600);
    });

    for (const version of ['2025-06-18', '2025-11-25']) {
      it(`refuses batches from a client speaking ${version} (batching left MCP in 2025-06-18)`, async () => {
        const res = await postMcp(svc, token, [{ jsonrpc: '2.0', id: 1, method: 'ping' }], {
          'MCP-Protocol-Version': version,
        });
        expect(res.status).to.equal(400);
        expect(res.body).to.deep.include({ jsonrpc: '2.0', id: null });
        expect(res.body.error.code).to.equal(-32600);
      });
    }
  });

  describe('authentication is REST’s', () => {
    async function sameAsRest(mcpToken: string | undefined, headers: Record<string, string> = {}) {
      const mcp = await rpc(svc, mcpToken, 'tools/list', {}, headers);
      const rest = await svc.request('GET', '/v1/organization', { token: mcpToken, headers });
      expect(mcp.status).to.equal(rest.status);
      expect(mcp.text).to.equal(rest.text);
      // A 401 of /mcp also says where to sign in (RFC 9728); every other header is REST's.
      const { 'www-authenticate': mcpChallenge, ...mcpHeaders } = comparableHeaders(mcp.headers);
      const { 'www-authenticate': restChallenge, ...restHeaders } = comparableHeaders(rest.headers);
      expect(mcpHeaders).to.deep.equal(restHeaders);
      if (rest.status !== 401) expect(mcpChallenge).to.equal(restChallenge);
      return mcp;
    }

    it('answers a missing token with REST’s 401 and a challenge naming the resource metadata', async () => {
      const res = await sameAsRest(undefined);
      expect(res.status).to.equal(401);
      expect(res.headers.get('www-authenticate')).to.match(
        /^Bearer resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp", scope="mcp\.access /,
      );
    });

    it('answers a malformed or unknown token with REST’s 401 and error="invalid_token"', async () => {
      for (const token of ['garbage', '99999|' + 'a'.repeat(48)]) {
        const res = await sameAsRest(token);
        expect(res.status).to.equal(401);
        expect(res.headers.get('www-authenticate')).to.include('error="invalid_token"');
      }
    });

    it('answers an organization without API access with REST’s 403 api_access_disabled', async () => {
      const noPlan = await svc.createOrg({ plan: null });
      const res = await sameAsRest(noPlan.token);
      expect(res.status).to.equal(403);
      expect(res.body.code).to.equal('api_access_disabled');
    });

    it('answers a token without mcp.access with 403 forbidden naming mcp.access, for every method', async () => {
      const { org } = await svc.createOrg();
      const noMcp = await svc.createToken(org, { abilities: ['codes.view', 'brands.view'] });
      for (const method of ['initialize', 'ping', 'tools/list', 'tools/call']) {
        const params =
          method === 'initialize'
            ? { protocolVersion: '2025-06-18' }
            : method === 'tools/call'
              ? { name: 'status_read', arguments: {} }
              : {};
        const res = await rpc(svc, noMcp, method, params);
        expect(res.status, method).to.equal(403);
        expect(res.body).to.deep.equal({
          message: 'This action requires the mcp.access ability.',
          code: 'forbidden',
          required_ability: 'mcp.access',
        });
      }
    });
  });
});
