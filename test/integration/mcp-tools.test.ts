import { expect } from 'chai';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import * as sdkTypes from '@modelcontextprotocol/sdk/types.js';
import { startTestService, type TestService } from '../helpers/harness.js';
import { TOOL_DEFS } from '../../server/mcp/catalog.js';
import { decodeQr } from '../helpers/qr-decode.js';
import { callTool, postMcp, rpc, toolError, toolOk } from './mcp-helpers.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

const outputAjv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
const outputValidators = new Map<string, ReturnType<Ajv2020['compile']>>();

/** Fails unless a tool's payload matches the outputSchema the tool declares in tools/list. */
function assertToolPayload(tool: string, payload: unknown): void {
  const validate = outputValidators.get(tool);
  if (!validate) expect.fail(`${tool} declares no outputSchema`);
  if (!validate(payload)) {
    expect.fail(`${tool} answered a payload its outputSchema refuses: ${JSON.stringify(validate.errors)}`);
  }
}

describe('MCP tools', () => {
  let svc: TestService;
  let token: string;
  let orgSlug: string;
  let fallbackDomain: string;
  const used = new Set<string>();

  async function ok(name: string, args: Record<string, unknown> = {}) {
    used.add(name);
    const payload = await toolOk(svc, token, name, args);
    assertToolPayload(name, payload);
    return payload;
  }

  before(async () => {
    // A generous rate limit: this file makes far more than a minute's worth of calls.
    svc = await startTestService({ config: { platformRateLimitPerMin: 100_000 } });
    const created = await svc.createOrg({ plan: 'professional_monthly', balanceMinor: 10_000 });
    token = created.token;
    orgSlug = created.org.slug;
    const domains = await svc.get('/v1/domains', token);
    fallbackDomain = domains.body.data.find((d: { type: string }) => d.type === 'fallback').ulid;
    const listed = await rpc(svc, token, 'tools/list', {});
    for (const t of listed.body.result.tools) {
      if (t.outputSchema) outputValidators.set(t.name, outputAjv.compile(t.outputSchema));
    }
  });
  after(() => svc.close());

  describe('tools/list', () => {
    it('lists the 25 tools of the interface, each with title, description, an object inputSchema and annotations', async () => {
      expect(TOOL_DEFS).to.have.length(25);
      const res = await rpc(svc, token, 'tools/list', {});
      const tools = res.body.result.tools;
      expect(tools.map((t: { name: string }) => t.name)).to.deep.equal(TOOL_DEFS.map((d) => d.name));
      for (const t of tools) {
        expect(t.title, t.name).to.be.a('string').and.not.equal('');
        expect(t.description, t.name).to.be.a('string').and.not.equal('');
        expect(t.inputSchema.type, t.name).to.equal('object');
        expect(t.inputSchema.additionalProperties, t.name).to.equal(false);
        expect(t.annotations, t.name).to.have.all.keys('title', 'readOnlyHint', 'destructiveHint', 'idempotentHint');
        expect(JSON.stringify(t.inputSchema), t.name).to.not.include('$id');
      }
      expect(res.body.result).to.not.have.property('nextCursor');
    });

    it('generates inputs from the REST schemas, destination as a string URL or a typed object for codes_create and codes_update', async () => {
      const res = await rpc(svc, token, 'tools/list', {});
      const byName = Object.fromEntries(res.body.result.tools.map((t: { name: string }) => [t.name, t]));
      const create = byName.codes_create.inputSchema;
      expect(create.required).to.have.members(['slug', 'destination', 'domain_ulid']);
      // A string URL (type url), or the destination object of another type.
      const [asUrl, asObject] = create.properties.destination.anyOf;
      expect(asUrl.type).to.equal('string');
      expect(asObject.type).to.equal('object');
      // The REST rule, not format uri: an IDN or a non-ASCII path is accepted and stored normalised.
      expect(asUrl).to.include({ maxLength: 2048, pattern: '^[Hh][Tt][Tt][Pp][Ss]?://' });
      // Each type's destination schema, keyed on type.
      expect(JSON.stringify(create.allOf)).to.include('"ssid"');
      expect(create.properties.type.default).to.equal('redirect');
      expect(create.properties).to.include.keys(
        'name',
        'brand_ulid',
        'style_ulid',
        'status',
        'routing',
        'schedule',
        'password',
        'redirect_cap',
      );
      const update = byName.codes_update.inputSchema;
      expect(update.required).to.deep.equal(['code_ulid']);
      expect(update.properties.destination.anyOf[0].type).to.equal('string');
      expect(byName.status_read.inputSchema).to.deep.equal({
        type: 'object',
        properties: {},
        required: [],
        additionalProperties: false,
      });
      expect(byName.analytics_read.inputSchema.properties).to.include.keys(
        'range',
        'dimension',
        'brand_ulid',
        'code_ulid',
        'include_bots',
      );
      for (const tool of ['analytics_read', 'analytics_export', 'analytics_code_read', 'analytics_code_export']) {
        expect(byName[tool].inputSchema.properties.include_bots.type, tool).to.equal('boolean');
        expect(byName[tool].description, tool).to.match(/include_bots/);
      }
      expect(byName.domains_create.inputSchema.required).to.deep.equal(['host']);
      expect(byName.domains_update.inputSchema.properties).to.include.keys(
        'domain_ulid',
        'verify',
        'refresh_ssl',
        'is_primary',
      );
      const bulkStatus = byName.codes_bulk_update_status.inputSchema;
      expect(bulkStatus.required).to.have.members(['code_ulids', 'status']);
      expect(bulkStatus.properties.code_ulids).to.include({ minItems: 1, maxItems: 1000 });
      expect(bulkStatus.properties).to.include.keys('confirm', 'confirmation_id');
      const bulkCreate = byName.codes_bulk_create.inputSchema;
      expect(bulkCreate.properties.rows.maxItems).to.equal(1000);
      expect(bulkCreate.properties.rows.items.required).to.have.members(['slug', 'destination', 'domain_ulid']);
      expect(bulkCreate.properties.rows.items.properties.destination.anyOf[0].type).to.equal('string');
      expect(byName.codes_delete.inputSchema.properties).to.include.keys('code_ulid', 'confirm', 'confirmation_id');
    });

    it('marks reads read-only and deletes destructive', async () => {
      const res = await rpc(svc, token, 'tools/list', {});
      const byName = Object.fromEntries(
        res.body.result.tools.map((t: { name: string; annotations: unknown }) => [t.name, t.annotations]),
      );
      expect(byName.codes_read).to.include({ readOnlyHint: true, destructiveHint: false, idempotentHint: true });
      expect(byName.codes_create).to.include({ readOnlyHint: false, destructiveHint: false, idempotentHint: false });
      expect(byName.codes_delete).to.include({ readOnlyHint: false, destructiveHint: true, idempotentHint: true });
      expect(byName.codes_bulk_update_status).to.include({ readOnlyHint: false, destructiveHint: true });
    });
  });

  describe('the official SDK client', () => {
    let client: Client;
    let transport: StreamableHTTPClientTransport;
    before(async () => {
      client = new Client({ name: 'mcp-tools-test', version: '1.0.0' });
      transport = new StreamableHTTPClientTransport(new URL(`${svc.url}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      });
      await client.connect(transport);
    });
    after(() => client.close());

    it('connects, negotiating the SDK’s latest protocol version', () => {
      expect(transport.protocolVersion).to.equal(sdkTypes.LATEST_PROTOCOL_VERSION);
      expect(client.getServerVersion()).to.deep.equal({ name: 'qr-service', title: 'QR code service', version: 'v1' });
      expect(client.getServerCapabilities()).to.deep.equal({ tools: { listChanged: false } });
      expect(client.getInstructions()).to.include('confirm: true');
    });

    it('lists exactly 25 tools whose inputSchemas and outputSchemas compile as JSON Schema 2020-12', async () => {
      const { tools } = await client.listTools();
      expect(tools).to.have.length(25);
      const ajv = addFormats(new Ajv2020({ strict: true, strictTypes: false, allErrors: true }));
      for (const t of tools) {
        const validate = ajv.compile(t.inputSchema);
        expect(validate({}), t.name).to.equal(((t.inputSchema.required as string[]) ?? []).length === 0);
        if (t.outputSchema) ajv.compile(t.outputSchema);
      }
    });

    it('answers tools with an outputSchema with structuredContent, which the SDK checks against it', async () => {
      const { tools } = await client.listTools();
      expect(tools.filter((t) => !t.outputSchema).map((t) => t.name)).to.deep.equal([]);
      // The SDK client validates structuredContent against the declared outputSchema itself.
      const status = await client.callTool({ name: 'status_read', arguments: {} });
      expect(status.isError).to.equal(false);
      expect(status.structuredContent).to.deep.equal(JSON.parse((status.content as { text: string }[])[0].text));
      const listed = await client.callTool({ name: 'codes_list', arguments: {} });
      expect(listed.structuredContent).to.have.property('data').that.is.an('array');
      // The guarded tools: their preview, then their result, both checked by the SDK.
      const made = await client.callTool({
        name: 'codes_bulk_create',
        arguments: { rows: [{ slug: 'sdk-bulk', destination: 'https://example.com/b', domain_ulid: fallbackDomain }] },
      });
      expect(made.isError).to.equal(false);
      const ulid = (made.structuredContent as { data: { ulid: string }[] }).data[0].ulid;
      const change = { code_ulids: [ulid], status: 'paused' };
      const preview = await client.callTool({ name: 'codes_bulk_update_status', arguments: change });
      const previewed = preview.structuredContent as { requires_confirmation: boolean; confirmation_id: string };
      expect(previewed.requires_confirmation).to.equal(true);
      const paused = await client.callTool({
        name: 'codes_bulk_update_status',
        arguments: { ...change, confirm: true, confirmation_id: previewed.confirmation_id },
      });
      expect(paused.structuredContent).to.have.nested.property('data[0].status', 'paused');
      const del = await client.callTool({ name: 'codes_delete', arguments: { code_ulid: ulid } });
      const delId = (del.structuredContent as { confirmation_id: string }).confirmation_id;
      const deleted = await client.callTool({
        name: 'codes_delete',
        arguments: { code_ulid: ulid, confirm: true, confirmation_id: delId },
      });
      expect(deleted.structuredContent).to.deep.equal({ deleted: true, code_ulid: ulid });
      // A failed call is a tool error with REST's body and no structuredContent to check.
      const gone = await client.callTool({ name: 'codes_image', arguments: { code_ulid: ulid } });
      expect(gone.isError).to.equal(true);
      expect(gone.structuredContent).to.equal(undefined);
      expect(JSON.parse((gone.content as { text: string }[])[0].text)).to.include({ code: 'not_found' });
    });

    it('calls tools and gets the REST payload as one text item', async () => {
      const org = await client.callTool({ name: 'organization_read', arguments: {} });
      const rest = await svc.get('/v1/organization', token);
      expect(org.isError).to.equal(false);
      expect(org.content).to.deep.equal([{ type: 'text', text: JSON.stringify(rest.body) }]);

      const created = await client.callTool({
        name: 'codes_create',
        arguments: { slug: 'sdk-made', destination: 'https://example.com/sdk', domain_ulid: fallbackDomain },
      });
      expect(created.isError).to.equal(false);
      const code = JSON.parse((created.content as { text: string }[])[0].text).data;
      expect(code.slug).to.equal(`${orgSlug}/sdk-made`);

      const read = await client.callTool({ name: 'codes_read', arguments: { code_ulid: code.ulid } });
      expect(JSON.parse((read.content as { text: string }[])[0].text).data.ulid).to.equal(code.ulid);

      const missing = await client.callTool({
        name: 'codes_read',
        arguments: { code_ulid: '01ARZ3NDEKTSV4RRFFQ69G5FAV' },
      });
      expect(missing.isError).to.equal(true);
      expect(JSON.parse((missing.content as { text: string }[])[0].text)).to.deep.equal({
        message: 'The QR code was not found.',
        code: 'not_found',
      });
    });

    it('reports an unknown tool as a JSON-RPC error', async () => {
      let caught: unknown;
      try {
        await client.callTool({ name: 'tokens_create', arguments: {} });
      } catch (err) {
        caught = err;
      }
      expect((caught as { code: number }).code).to.equal(-32602);
    });
  });

  describe('every tool through raw JSON-RPC with Accept: application/json', () => {
    let codeUlid: string;
    let domainUlid: string;

    it('status_read, organization_read and wallet_read answer what REST answers', async () => {
      const status = await ok('status_read');
      const restStatus = await svc.get('/v1/status', token);
      expect(status).to.deep.equal(restStatus.body);
      expect(await ok('organization_read')).to.deep.equal((await svc.get('/v1/organization', token)).body);
      expect(await ok('wallet_read', { per_page: 5 })).to.deep.equal(
        (await svc.get('/v1/wallet?per_page=5', token)).body,
      );
    });

    it('codes_create creates a code (type redirect accepted) and codes_read, codes_list return it', async () => {
      const created = await ok('codes_create', {
        slug: 'promo',
        destination: 'https://example.com/promo',
        domain_ulid: fallbackDomain,
        name: 'Promo',
        type: 'redirect',
        redirect_cap: 100,
      });
      codeUlid = created.data.ulid;
      expect(created.data).to.include({
        slug: `${orgSlug}/promo`,
        name: 'Promo',
        type: 'url',
        status: 'active',
        redirect_cap: 100,
      });
      expect(await ok('codes_read', { code_ulid: codeUlid })).to.deep.equal(
        (await svc.get(`/v1/qr-codes/${codeUlid}`, token)).body,
      );
      const list = await ok('codes_list');
      expect(list).to.deep.equal((await svc.get('/v1/qr-codes', token)).body);
      expect(list.data.map((c: { ulid: string }) => c.ulid)).to.include(codeUlid);
    });

    it('codes_update changes the destination given as a string', async () => {
      const updated = await ok('codes_update', {
        code_ulid: codeUlid,
        destination: 'https://example.com/new',
        status: 'paused',
      });
      expect(updated.data).to.include({ destination: 'https://example.com/new', status: 'paused' });
    });

    it('domains_create, domains_read, domains_list and domains_update manage a custom domain', async () => {
      const created = await ok('domains_create', { host: 'qr.shop-example.com' });
      domainUlid = created.data.ulid;
      expect(created.data).to.include({ host: 'qr.shop-example.com', type: 'custom', status: 'pending' });
      expect(await ok('domains_read', { domain_ulid: domainUlid })).to.deep.equal(
        (await svc.get(`/v1/domains/${domainUlid}`, token)).body,
      );
      const list = await ok('domains_list');
      expect(list).to.deep.equal((await svc.get('/v1/domains', token)).body);
      const updated = await callTool(svc, token, 'domains_update', { domain_ulid: domainUlid, is_primary: true });
      used.add('domains_update');
      const rest = await svc.patch(`/v1/domains/${domainUlid}`, token, { is_primary: true });
      expect(updated.isError).to.equal(rest.status >= 400);
      if (!updated.isError) expect(updated.payload.data.is_primary).to.equal(true);
      else expect(updated.payload).to.deep.equal(rest.body);
    });

    it('the analytics tools answer what the analytics endpoints answer', async () => {
      expect(await ok('analytics_read', { range: 7, dimension: 'country' })).to.deep.equal(
        (await svc.get('/v1/analytics?range=7&dimension=country', token)).body,
      );
      expect(await ok('analytics_export', { range: 30, dimension: 'device' })).to.deep.equal(
        (await svc.get('/v1/analytics/export?range=30&dimension=device', token)).body,
      );
      expect(await ok('analytics_code_read', { code_ulid: codeUlid, range: 7 })).to.deep.equal(
        (await svc.get(`/v1/analytics/qr-codes/${codeUlid}?range=7`, token)).body,
      );
      const raw = await ok('analytics_code_export', { code_ulid: codeUlid, limit: 10 });
      expect(raw.data.rows).to.deep.equal([]);
      expect(raw.data.meta.has_more).to.equal(false);
    });

    it('codes_bulk_create creates up to 10 rows at once without confirmation', async () => {
      const rows = [1, 2, 3].map((i) => ({
        slug: `bulk-${i}`,
        destination: `https://example.com/${i}`,
        domain_ulid: fallbackDomain,
      }));
      const created = await ok('codes_bulk_create', { rows });
      expect(created.data.map((c: { slug: string }) => c.slug)).to.deep.equal(
        [1, 2, 3].map((i) => `${orgSlug}/bulk-${i}`),
      );
    });

    it('codes_bulk_create is all or nothing: one bad row creates none and names the row', async () => {
      const rows = [
        { slug: 'atomic-1', destination: 'https://example.com/1', domain_ulid: fallbackDomain },
        { slug: 'atomic-2', destination: 'ftp://example.com/2', domain_ulid: fallbackDomain },
      ];
      const err = await toolError(svc, token, 'codes_bulk_create', { rows });
      expect(err.code).to.equal('validation_failed');
      expect(Object.keys(err.errors)).to.deep.equal(['rows.1.destination']);
      const list = await svc.get('/v1/qr-codes', token);
      expect(list.body.data.map((c: { slug: string }) => c.slug)).to.not.include(`${orgSlug}/atomic-1`);
    });

    it('codes_bulk_update_status previews, then sets the status of the listed codes', async () => {
      const preview = await ok('codes_bulk_update_status', { code_ulids: [codeUlid], status: 'archived' });
      expect(preview.requires_confirmation).to.equal(true);
      const done = await ok('codes_bulk_update_status', {
        code_ulids: [codeUlid],
        status: 'archived',
        confirm: true,
        confirmation_id: preview.confirmation_id,
      });
      expect(done.data.map((c: { ulid: string; status: string }) => [c.ulid, c.status])).to.deep.equal([
        [codeUlid, 'archived'],
      ]);
    });

    it('codes_delete previews, then deletes', async () => {
      const preview = await ok('codes_delete', { code_ulid: codeUlid });
      expect(preview.preview.code.ulid).to.equal(codeUlid);
      expect((await svc.get(`/v1/qr-codes/${codeUlid}`, token)).status).to.equal(200);
      const done = await ok('codes_delete', {
        code_ulid: codeUlid,
        confirm: true,
        confirmation_id: preview.confirmation_id,
      });
      expect(done).to.deep.equal({ deleted: true, code_ulid: codeUlid });
      expect((await svc.get(`/v1/qr-codes/${codeUlid}`, token)).status).to.equal(404);
    });

    it('brands_create, brands_read, brands_list and brands_update manage a brand', async () => {
      const created = await ok('brands_create', { name: 'Acme' });
      const brandUlid = created.data.ulid;
      expect(await ok('brands_read', { brand_ulid: brandUlid })).to.deep.equal(
        (await svc.get(`/v1/brands/${brandUlid}`, token)).body,
      );
      expect(await ok('brands_list')).to.deep.equal((await svc.get('/v1/brands', token)).body);
      const updated = await ok('brands_update', { brand_ulid: brandUlid, name: 'Acme 2' });
      expect(updated.data.name).to.equal('Acme 2');
    });

    it('styles_create and styles_list manage styles', async () => {
      const created = await ok('styles_create', { name: 'Dark', config: { dotsOptions: { color: '#000000' } } });
      expect(created.data.name).to.equal('Dark');
      expect(await ok('styles_list')).to.deep.equal((await svc.get('/v1/qr-styles', token)).body);
    });

    it('codes_image answers the code’s QR image as image content in the requested format and size, described by structuredContent', async () => {
      const created = await ok('codes_create', {
        slug: 'poster',
        destination: 'https://example.com/poster',
        domain_ulid: fallbackDomain,
      });
      const code_ulid = created.data.ulid;
      const callsBefore = (await svc.get('/v1/status', token)).body.api.calls_used_month;
      const png = (await rpc(svc, token, 'tools/call', { name: 'codes_image', arguments: { code_ulid, size: 256 } }))
        .body.result;
      used.add('codes_image');
      expect(png.isError).to.equal(false);
      const [image, text] = png.content;
      expect(image).to.include({ type: 'image', mimeType: 'image/png' });
      const pngBytes = Buffer.from(image.data, 'base64');
      expect(await decodeQr(pngBytes)).to.equal(created.data.public_url);
      // PNG IHDR: width and height at bytes 16 and 20.
      expect([pngBytes.readUInt32BE(16), pngBytes.readUInt32BE(20)]).to.deep.equal([256, 256]);
      expect(png.structuredContent).to.include({ code_ulid, format: 'png', mime_type: 'image/png', size: 256 });
      expect(JSON.parse(text.text)).to.deep.equal(png.structuredContent);
      assertToolPayload('codes_image', png.structuredContent);

      const svg = (
        await rpc(svc, token, 'tools/call', { name: 'codes_image', arguments: { code_ulid, size: 512, format: 'svg' } })
      ).body.result;
      expect(svg.content[0]).to.include({ type: 'image', mimeType: 'image/svg+xml' });
      const svgText = Buffer.from(svg.content[0].data, 'base64').toString('utf8');
      expect(svgText).to.match(/<svg[^>]*\swidth="512"/);
      expect(svgText).to.match(/<svg[^>]*\sheight="512"/);
      expect(svg.structuredContent).to.include({ format: 'svg', size: 512 });
      assertToolPayload('codes_image', svg.structuredContent);
      // The same image, byte for byte, as REST's.
      const rest = await fetch(`${svc.url}/v1/qr-codes/${code_ulid}/image?format=svg&size=512`, {
        headers: { Authorization: `Bearer ${token}` },
      });
      expect(await rest.text()).to.equal(svgText);
      // One metered call each, as GET /v1/qr-codes/{code_ulid}/image is.
      expect((await svc.get('/v1/status', token)).body.api.calls_used_month).to.equal(callsBefore + 3);
    });

    it('has called every one of the 25 tools', () => {
      expect([...used].sort()).to.deep.equal(TOOL_DEFS.map((d) => d.name).sort());
    });
  });

  describe('tool errors carry the REST error body', () => {
    it('answers a missing code with REST’s 404 body', async () => {
      const err = await toolError(svc, token, 'codes_read', { code_ulid: '01ARZ3NDEKTSV4RRFFQ69G5FAV' });
      const rest = await svc.get('/v1/qr-codes/01ARZ3NDEKTSV4RRFFQ69G5FAV', token);
      expect(err).to.deep.equal(rest.body);
    });

    it('codes_image answers another organization’s code like codes_read (404) and needs codes.view', async () => {
      const other = await svc.createOrg({ plan: 'professional_monthly' });
      const domains = await svc.get('/v1/domains', other.token);
      const foreign = await svc.post('/v1/qr-codes', other.token, {
        slug: 'theirs',
        destination: 'https://example.com/theirs',
        domain_ulid: domains.body.data[0].ulid,
      });
      const args = { code_ulid: foreign.body.data.ulid };
      expect(await toolError(svc, token, 'codes_image', args)).to.deep.equal(
        await toolError(svc, token, 'codes_read', args),
      );
      const noView = await svc.createToken(other.org, { abilities: ['mcp.access', 'codes.create'] });
      const refused = await toolError(svc, noView, 'codes_image', args);
      expect(refused).to.include({ code: 'forbidden', required_ability: 'codes.view' });
    });

    it('answers invalid input with REST’s 422 body', async () => {
      const args = { slug: 'bad slug!', destination: 'https://example.com', domain_ulid: fallbackDomain };
      const err = await toolError(svc, token, 'codes_create', args);
      const rest = await svc.post('/v1/qr-codes', token, args);
      expect(rest.status).to.equal(422);
      expect(err).to.deep.equal(rest.body);
    });

    it('refuses an argument the tool does not take with 422', async () => {
      const err = await toolError(svc, token, 'status_read', { verbose: true });
      const message = 'This field is not allowed: no fields are accepted here.';
      expect(err).to.deep.equal({ message, code: 'validation_failed', errors: { verbose: [message] } });
    });

    it('refuses a __proto__ argument as an unknown field', async () => {
      const raw = `{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"brands_create","arguments":{"name":"P","__proto__":{"admin":true}}}}`;
      const res = await postMcp(svc, token, raw);
      expect(res.status).to.equal(200);
      expect(res.body.result.isError).to.equal(true);
      const errors = JSON.parse(res.body.result.content[0].text).errors;
      expect(Object.keys(errors)).to.deep.equal(['__proto__']);
      expect(Object.getOwnPropertyDescriptor(errors, '__proto__')?.value).to.deep.equal([
        'This field is not allowed. Accepted: name, slug, brand_kit, settings, tracking_pixels, primary_domain_ulid.',
      ]);
      expect((await svc.get('/v1/brands', token)).body.data.map((b: { name: string }) => b.name)).to.not.include('P');
      const statusRaw = `{"jsonrpc":"2.0","id":100,"method":"tools/call","params":{"name":"status_read","arguments":{"__proto__":{}}}}`;
      const status = await postMcp(svc, token, statusRaw);
      expect(status.body.result.isError).to.equal(true);
    });

    it('refuses a missing path parameter with 422', async () => {
      const err = await toolError(svc, token, 'codes_read', {});
      expect(err).to.deep.equal({
        message: 'This field is required.',
        code: 'validation_failed',
        errors: { code_ulid: ['This field is required.'] },
      });
    });

    it('answers a plan-gated field with feature_not_in_plan', async () => {
      const starter = await svc.createOrg({ plan: 'starter_monthly', balanceMinor: 1000 });
      const domains = await svc.get('/v1/domains', starter.token);
      const domain = domains.body.data[0].ulid;
      const err = await toolError(svc, starter.token, 'codes_create', {
        slug: 'capped',
        destination: 'https://example.com',
        domain_ulid: domain,
        redirect_cap: 5,
      });
      expect(err).to.deep.include({ code: 'feature_not_in_plan', feature: 'redirect_cap' });
    });
  });

  describe('abilities', () => {
    it('needs the mapped ability besides mcp.access', async () => {
      const { org } = await svc.createOrg();
      const viewer = await svc.createToken(org, { abilities: ['mcp.access', 'codes.view'] });
      expect((await toolOk(svc, viewer, 'codes_list')).data).to.deep.equal([]);
      expect(await toolOk(svc, viewer, 'status_read')).to.have.property('status', 'ok');
      const cases: [string, Record<string, unknown>, string][] = [
        ['codes_create', { slug: 'x', destination: 'https://e.com', domain_ulid: fallbackDomain }, 'codes.create'],
        [
          'codes_bulk_create',
          { rows: [{ slug: 'x', destination: 'https://e.com', domain_ulid: fallbackDomain }] },
          'codes.create',
        ],
        ['codes_bulk_update_status', { code_ulids: ['01ARZ3NDEKTSV4RRFFQ69G5FAV'], status: 'paused' }, 'codes.update'],
        ['codes_delete', { code_ulid: '01ARZ3NDEKTSV4RRFFQ69G5FAV' }, 'codes.delete'],
        ['wallet_read', {}, 'wallet.view'],
        ['analytics_read', {}, 'analytics.view'],
        ['analytics_code_export', { code_ulid: '01ARZ3NDEKTSV4RRFFQ69G5FAV' }, 'analytics.export'],
        ['domains_create', { host: 'a.example.com' }, 'domains.manage'],
      ];
      for (const [tool, args, ability] of cases) {
        const err = await toolError(svc, viewer, tool, args);
        expect(err, tool).to.deep.equal({
          message: `This action requires the ${ability} ability.`,
          code: 'forbidden',
          required_ability: ability,
        });
      }
    });

    it('narrows a token by its holder’s role: a viewer cannot create even with a * token', async () => {
      const { org } = await svc.createOrg();
      const viewerStar = await svc.createToken(org, { role: 'viewer', abilities: ['*'] });
      // A viewer's role holds no mcp.access, so the endpoint itself is closed to it.
      const res = await rpc(svc, viewerStar, 'tools/list', {});
      expect(res.status).to.equal(403);
      expect(res.body.required_ability).to.equal('mcp.access');
    });
  });

  describe('isolation', () => {
    it('does not find another organization’s code', async () => {
      const other = await svc.createOrg();
      const domains = await svc.get('/v1/domains', other.token);
      const theirs = await toolOk(svc, other.token, 'codes_create', {
        slug: 'theirs',
        destination: 'https://example.com',
        domain_ulid: domains.body.data[0].ulid,
      });
      const err = await toolError(svc, token, 'codes_read', { code_ulid: theirs.data.ulid });
      expect(err.code).to.equal('not_found');
      const del = await toolError(svc, token, 'codes_delete', { code_ulid: theirs.data.ulid });
      expect(del.code).to.equal('not_found');
    });
  });
});
