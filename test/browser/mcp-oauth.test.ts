// Signing an MCP client in with OAuth, end to end: the official MCP SDK's OAuth client provider
// against the running service, the sign-in and consent pages driven in Debian's Chromium, a Client
// ID Metadata Document served over https by a loopback server (its certificate from a throwaway
// CA the service is told to trust with OAUTH_CLIENT_METADATA_CA_FILE, and its address allowed with
// WEBHOOK_ALLOWED_TARGETS, as an operator would for an internal client), Dynamic Client
// Registration, tool calls with the granted abilities only, refresh rotation, reuse detection,
// revocation, each refusal an attacker would meet, the three protocol revisions and isolation.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { expect } from 'chai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { auth, UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { redeemLink } from '../../server/accounts/service.js';
import { addMember, requireOrganization } from '../../server/organizations/service.js';
import { freePort } from '../../server/stores/postgres.js';
import { startTestService, type TestService } from '../helpers/harness.js';
import { inspectorHome, runInspector, startInspector } from '../helpers/inspector.js';
import { createTestCa } from '../helpers/test-certs.js';
import { linkSecret, qrctl } from '../helpers/web-client.js';
import { createAcme, heading, launchBrowser, outputDir, tmpFile } from './browser.js';

const PASSWORD = 'a long enough password';
const CLIENT = { address: '127.0.0.1', userAgent: 'test' };

/** The MCP client application's side: storage for what the SDK hands it. */
class TestProvider implements OAuthClientProvider {
  info: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authUrl: URL | undefined;
  constructor(
    readonly redirectUrl: string,
    readonly clientMetadata: OAuthClientMetadata,
    readonly clientMetadataUrl?: string,
  ) {}
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
}

function listen(server: http.Server | https.Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

function pkce() {
  const verifier = crypto.randomBytes(32).toString('base64url');
  return { verifier, challenge: crypto.createHash('sha256').update(verifier).digest('base64url') };
}

describe('MCP sign-in with OAuth (SDK client, consent in Chromium)', function () {
  this.timeout(180_000);
  let svc: TestService;
  let browser: Browser;
  let owner: BrowserContext;
  let apiToken: string;
  let orgUlid: string;
  let callbackPort: number;
  let cimdPort: number;
  let callback: http.Server;
  let cimdServer: https.Server;
  let privateCimd: https.Server;
  let privatePort: number;
  let redirectUri: string;
  let cimdUrl: string;
  const cimdDoc: Record<string, unknown> = {};

  before(async function () {
    this.timeout(600_000);
    // The client's loopback redirect target: records nothing, the browser's URL tells the code.
    callback = http.createServer((req, res) => {
      if (req.url?.startsWith('/frame')) {
        res.setHeader('Content-Type', 'text/html');
        const target = new URL(req.url, 'http://x').searchParams.get('src') ?? '';
        res.end(`<!doctype html><title>framer</title><iframe id="f" src="${target.replace(/"/g, '&quot;')}"></iframe>`);
        return;
      }
      res.setHeader('Content-Type', 'text/plain');
      res.end('You can close this window.');
    });
    callbackPort = await listen(callback);
    redirectUri = `http://127.0.0.1:${callbackPort}/callback`;
    // The client metadata document, over https with a certificate of a throwaway CA.
    const ca = await createTestCa();
    const leaf = await ca.issue({ dns: ['localhost'], ip: ['127.0.0.1'] });
    const caFile = tmpFile('ca.pem', ca.certPem);
    const serveDoc = (doc: () => unknown) => (req: http.IncomingMessage, res: http.ServerResponse) => {
      // /oauth/client.json is the document; /oauth/copy.json serves it under a URL that is not its client_id.
      if (req.url !== '/oauth/client.json' && req.url !== '/oauth/copy.json') {
        res.statusCode = 404;
        return res.end();
      }
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify(doc()));
    };
    cimdServer = https.createServer(
      { cert: leaf.certPem, key: leaf.keyPem },
      serveDoc(() => cimdDoc),
    );
    cimdPort = await listen(cimdServer);
    cimdUrl = `https://localhost:${cimdPort}/oauth/client.json`;
    Object.assign(cimdDoc, {
      client_id: cimdUrl,
      client_name: 'Assistant via CIMD',
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
    // The same kind of document on an address nobody allowed.
    privateCimd = https.createServer(
      { cert: leaf.certPem, key: leaf.keyPem },
      serveDoc(() => cimdDoc),
    );
    privatePort = await listen(privateCimd);

    svc = await startTestService({
      config: {
        oauthClientMetadataCaFile: caFile,
        webhookAllowedTargets: [`localhost:${cimdPort}`],
        oauthRegistrationsPerHour: 10,
      },
    });
    browser = await launchBrowser();
    const created = await createAcme(svc.app);
    orgUlid = created.organization.ulid;
    apiToken = created.token;
    await redeemLink(svc.app, linkSecret(created.sign_in_link), { password: PASSWORD }, CLIENT);
    owner = await browser.newContext();
  });

  after(async () => {
    await browser?.close();
    await svc?.close();
    for (const s of [callback, cimdServer, privateCimd]) s?.close();
  });

  /** Drives the pages: sign-in when needed, then consent with some abilities unticked; returns the callback's query. */
  async function consent(
    context: BrowserContext,
    authUrl: URL | string,
    opts: { email?: string; uncheck?: string[]; shot?: string; deny?: boolean } = {},
  ): Promise<URLSearchParams> {
    const page = await context.newPage();
    try {
      await page.goto(String(authUrl));
      if (await page.getByLabel('Password').count()) {
        await heading(page, 'Sign in to connect an application');
        await page.getByLabel('Email').fill(opts.email ?? 'owner@acme.example');
        await page.getByLabel('Password').fill(PASSWORD);
        await page.getByRole('button', { name: 'Sign in' }).click();
      }
      await heading(page, 'Connect an application');
      for (const a of opts.uncheck ?? []) await page.locator(`input[name=abilities][value="${a}"]`).uncheck();
      if (opts.shot) await page.screenshot({ path: path.join(outputDir(), `${opts.shot}.png`), fullPage: true });
      await Promise.all([
        page.waitForURL(/\/callback\?/),
        page.getByRole('button', { name: opts.deny ? 'Deny' : 'Allow' }).click(),
      ]);
      return new URL(page.url()).searchParams;
    } finally {
      await page.close();
    }
  }

  /** Connects the SDK client: the first attempt asks for authorization, the browser consents, then finishAuth. */
  async function signInWithSdk(provider: TestProvider, uncheck: string[] = [], shot?: string): Promise<Client> {
    const url = new URL(`${svc.url}/mcp`);
    const first = new Client({ name: 'oauth-test', version: '1' });
    let refused: unknown;
    try {
      await first.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
    } catch (err) {
      refused = err;
    }
    expect(refused).to.be.instanceOf(UnauthorizedError);
    expect(provider.authUrl, 'the SDK asked for authorization').to.not.equal(undefined);
    const query = await consent(owner, provider.authUrl!, { uncheck, shot });
    expect(query.get('iss')).to.equal(svc.url);
    const code = query.get('code');
    expect(code, query.toString()).to.be.a('string');
    const transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
    await transport.finishAuth(code!);
    const client = new Client({ name: 'oauth-test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
    return client;
  }

  async function postForm(pathname: string, form: Record<string, string>) {
    const res = await fetch(`${svc.url}${pathname}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
  }

  async function mcpStatus(accessToken: string): Promise<number> {
    const res = await fetch(`${svc.url}/mcp`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${accessToken}`,
        'Content-Type': 'application/json',
        Accept: 'application/json',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    return res.status;
  }

  async function registerRaw(name: string): Promise<string> {
    const res = await fetch(`${svc.url}/oauth/register`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ client_name: name, redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' }),
    });
    expect(res.status).to.equal(201);
    return ((await res.json()) as { client_id: string }).client_id;
  }

  function authorizeUrl(params: Record<string, string>): string {
    return `${svc.url}/oauth/authorize?${new URLSearchParams(params)}`;
  }

  /** A well-formed authorization request of the client (PKCE S256, the test's redirect URI), plus extras. */
  function requestUrl(clientId: string, challenge: string, extra: Record<string, string> = {}): string {
    return authorizeUrl({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: redirectUri,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      ...extra,
    });
  }

  /** A code for a raw client, through the consent page; returns it with its PKCE verifier. */
  async function rawCode(clientId: string, extra: Record<string, string> = {}) {
    const { verifier, challenge } = pkce();
    const query = await consent(
      owner,
      requestUrl(clientId, challenge, { state: 'st-1', resource: `${svc.url}/mcp`, ...extra }),
    );
    expect(query.get('state')).to.equal('st-1');
    return { code: query.get('code')!, verifier };
  }

  async function exchange(clientId: string, code: string, verifier: string, extra: Record<string, string> = {}) {
    return postForm('/oauth/token', {
      grant_type: 'authorization_code',
      client_id: clientId,
      code,
      code_verifier: verifier,
      redirect_uri: redirectUri,
      resource: `${svc.url}/mcp`,
      ...extra,
    });
  }

  describe('discovery', () => {
    it('answers an unauthenticated /mcp call 401 with the resource metadata URL and the scopes', async () => {
      const res = await fetch(`${svc.url}/mcp`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(res.status).to.equal(401);
      const challenge = res.headers.get('www-authenticate')!;
      expect(challenge).to.match(/^Bearer /);
      expect(challenge).to.include(`resource_metadata="${svc.url}/.well-known/oauth-protected-resource/mcp"`);
      expect(challenge).to.match(/scope="mcp\.access [^"]*codes\.view/);
      const bad = await mcpStatus('1|' + 'x'.repeat(48));
      expect(bad).to.equal(401);
    });

    it('publishes the protected resource metadata (RFC 9728) and the authorization server metadata (RFC 8414)', async () => {
      for (const p of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
        const prm = await (await fetch(`${svc.url}${p}`)).json();
        expect(prm).to.include({ resource: `${svc.url}/mcp` });
        expect(prm.authorization_servers).to.deep.equal([svc.url]);
        expect(prm.scopes_supported).to.include.members(['mcp.access', 'codes.view', 'codes.create']);
      }
      const as = await (await fetch(`${svc.url}/.well-known/oauth-authorization-server`)).json();
      expect(as).to.include({
        issuer: svc.url,
        authorization_endpoint: `${svc.url}/oauth/authorize`,
        token_endpoint: `${svc.url}/oauth/token`,
        revocation_endpoint: `${svc.url}/oauth/revoke`,
        registration_endpoint: `${svc.url}/oauth/register`,
        client_id_metadata_document_supported: true,
      });
      expect(as.code_challenge_methods_supported).to.deep.equal(['S256']);
      expect(as.grant_types_supported).to.deep.equal(['authorization_code', 'refresh_token']);
    });
  });

  describe('a client with a metadata document (CIMD)', () => {
    let provider: TestProvider;
    let client: Client;

    before(async () => {
      provider = new TestProvider(redirectUri, { client_name: 'ignored', redirect_uris: [redirectUri] }, cimdUrl);
      client = await signInWithSdk(provider, ['codes.create', 'codes.delete'], 'mcp-consent');
    });
    after(() => client?.close());

    it('saved the consent page for the documentation', () => {
      expect(fs.existsSync(path.join(outputDir(), 'mcp-consent.png'))).to.equal(true);
    });

    it('asked for authorization with the document URL as client_id, PKCE S256 and the /mcp resource', () => {
      const u = provider.authUrl!;
      expect(u.origin + u.pathname).to.equal(`${svc.url}/oauth/authorize`);
      expect(u.searchParams.get('client_id')).to.equal(cimdUrl);
      expect(u.searchParams.get('code_challenge_method')).to.equal('S256');
      expect(u.searchParams.get('resource')).to.equal(`${svc.url}/mcp`);
      expect(provider.saved?.refresh_token).to.be.a('string');
    });

    it('calls tools with the granted abilities only', async () => {
      const listed = await client.callTool({ name: 'codes_list', arguments: {} });
      expect(listed.isError).to.equal(false);
      const create = await client.callTool({
        name: 'codes_create',
        arguments: { slug: 'nope', destination: 'https://example.com' },
      });
      expect(create.isError).to.equal(true);
      expect(JSON.parse((create.content as { text: string }[])[0].text)).to.include({
        code: 'forbidden',
        required_ability: 'codes.create',
      });
      expect(provider.saved!.scope!.split(' ')).to.not.include('codes.create');
    });

    it('counts its calls as API calls and lists it as a connected app, which REST does not accept', async () => {
      const before = (await svc.get('/v1/status', apiToken)).body.api.calls_used_month;
      await client.callTool({ name: 'codes_list', arguments: {} });
      expect((await svc.get('/v1/status', apiToken)).body.api.calls_used_month).to.equal(before + 1);
      const tokens = (await svc.get('/v1/tokens', apiToken)).body.data as {
        id: number;
        connected_app: { client_id: string; client_name: string; redirect_host: string } | null;
      }[];
      const app = tokens.find((t) => t.connected_app?.client_id === cimdUrl);
      expect(app?.connected_app).to.deep.equal({
        client_id: cimdUrl,
        client_name: 'Assistant via CIMD',
        redirect_host: `127.0.0.1:${callbackPort}`,
      });
      // Audience-bound: the access token is for /mcp only.
      const rest = await svc.get('/v1/status', provider.saved!.access_token);
      expect(rest.status).to.equal(401);
    });

    it('speaks the three protocol revisions with an OAuth access token', async () => {
      const token = provider.saved!.access_token;
      const headers = {
        Authorization: `Bearer ${token}`,
        'Content-Type': 'application/json',
        Accept: 'application/json',
      };
      for (const v of ['2025-06-18', '2025-11-25']) {
        const res = await fetch(`${svc.url}/mcp`, {
          method: 'POST',
          headers,
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'initialize',
            params: { protocolVersion: v, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
          }),
        });
        expect((await res.json()).result.protocolVersion).to.equal(v);
      }
      const res = await fetch(`${svc.url}/mcp`, {
        method: 'POST',
        headers: {
          ...headers,
          'MCP-Protocol-Version': '2026-07-28',
          'Mcp-Method': 'tools/call',
          'Mcp-Name': 'codes_list',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 2,
          method: 'tools/call',
          params: {
            name: 'codes_list',
            arguments: {},
            _meta: {
              'io.modelcontextprotocol/protocolVersion': '2026-07-28',
              'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
              'io.modelcontextprotocol/clientCapabilities': {},
            },
          },
        }),
      });
      expect(res.status).to.equal(200);
      expect((await res.json()).result.isError).to.equal(false);
    });

    it('sees only its own organization’s codes (isolation)', async () => {
      const other = (await qrctl(svc.app, [
        'org',
        'create',
        '--name',
        'Other',
        '--slug',
        'other',
        '--plan',
        'professional_monthly',
        '--currency',
        'EUR',
        '--owner-email',
        'other@other.example',
      ])) as { token: string };
      const domain = (await svc.get('/v1/domains', other.token)).body.data[0].ulid;
      const theirs = (
        await svc.post('/v1/qr-codes', other.token, {
          slug: 'theirs',
          destination: 'https://example.com/t',
          domain_ulid: domain,
        })
      ).body.data;
      const read = await client.callTool({ name: 'codes_read', arguments: { code_ulid: theirs.ulid } });
      expect(read.isError).to.equal(true);
      expect(JSON.parse((read.content as { text: string }[])[0].text).code).to.equal('not_found');
      // Nor can the other organization see or revoke the connected app.
      const ours = (await svc.get('/v1/tokens', apiToken)).body.data.find(
        (t: { connected_app: { client_id: string } | null }) => t.connected_app?.client_id === cimdUrl,
      );
      const del = await svc.delete(`/v1/tokens/${ours.id}`, other.token);
      expect(del.status).to.equal(404);
      expect(await mcpStatus(provider.saved!.access_token)).to.equal(200);
    });

    it('rotates the refresh token on use; the old one presented again revokes the whole grant', async () => {
      const old = provider.saved!;
      const result = await auth(provider, { serverUrl: `${svc.url}/mcp` });
      expect(result).to.equal('AUTHORIZED');
      const fresh = provider.saved!;
      expect(fresh.refresh_token).to.not.equal(old.refresh_token);
      expect(fresh.access_token).to.not.equal(old.access_token);
      expect(await mcpStatus(fresh.access_token)).to.equal(200);
      const reuse = await postForm('/oauth/token', {
        grant_type: 'refresh_token',
        client_id: cimdUrl,
        refresh_token: old.refresh_token!,
      });
      expect(reuse.status).to.equal(400);
      expect(reuse.body.error).to.equal('invalid_grant');
      expect(await mcpStatus(fresh.access_token)).to.equal(401);
      const after = await postForm('/oauth/token', {
        grant_type: 'refresh_token',
        client_id: cimdUrl,
        refresh_token: fresh.refresh_token!,
      });
      expect(after.body.error).to.equal('invalid_grant');
    });
  });

  describe('a client that registers itself (DCR)', () => {
    it('registers, signs in, works, and is disconnected by revocation (RFC 7009)', async () => {
      const provider = new TestProvider(redirectUri, {
        client_name: 'Assistant via DCR',
        redirect_uris: [redirectUri],
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      });
      const client = await signInWithSdk(provider);
      const clientId = provider.info!.client_id;
      expect(clientId).to.match(/^dcr_/);
      const made = await client.callTool({
        name: 'codes_create',
        arguments: {
          slug: 'from-dcr',
          destination: 'https://example.com/dcr',
          domain_ulid: (await svc.get('/v1/domains', apiToken)).body.data[0].ulid,
        },
      });
      expect(made.isError).to.equal(false);
      const revoked = await postForm('/oauth/revoke', { token: provider.saved!.access_token, client_id: clientId });
      expect(revoked.status).to.equal(200);
      expect(await mcpStatus(provider.saved!.access_token)).to.equal(401);
      const refresh = await postForm('/oauth/token', {
        grant_type: 'refresh_token',
        client_id: clientId,
        refresh_token: provider.saved!.refresh_token!,
      });
      expect(refresh.body.error).to.equal('invalid_grant');
      await client.close();
      // An unknown token is answered 200 all the same (RFC 7009 section 2.2).
      expect((await postForm('/oauth/revoke', { token: 'nothing', client_id: clientId })).status).to.equal(200);
    });

    it('is listed under connected apps on the dashboard’s tokens page and disconnected there', async () => {
      const clientId = await registerRaw('Listed app');
      const { code, verifier } = await rawCode(clientId);
      const tokens = (await exchange(clientId, code, verifier)).body;
      const listed = (await svc.get('/v1/tokens', apiToken)).body.data.find(
        (t: { connected_app: { client_id: string } | null }) => t.connected_app?.client_id === clientId,
      );
      expect(listed.connected_app.client_name).to.equal('Listed app');
      // The same browser session the consent used is the dashboard's.
      const page = await owner.newPage();
      try {
        await page.goto(`${svc.url}/app/o/${orgUlid}/tokens`);
        await heading(page, 'API tokens');
        const row = page.getByRole('table', { name: 'Connected apps' }).getByRole('row', { name: /Listed app/ });
        expect(await row.textContent()).to.include(`127.0.0.1:${callbackPort}`);
        await row.getByRole('button', { name: 'Disconnect Listed app' }).click();
        await page.getByRole('dialog').getByRole('button', { name: 'Disconnect Listed app' }).click();
        await row.waitFor({ state: 'detached' });
      } finally {
        await page.close();
      }
      expect(await mcpStatus(tokens.access_token)).to.equal(401);
      const refresh = await postForm('/oauth/token', {
        grant_type: 'refresh_token',
        client_id: clientId,
        refresh_token: tokens.refresh_token,
      });
      expect(refresh.body.error).to.equal('invalid_grant');
    });
  });

  // The MCP Inspector (2.x) signs in by itself, the documented way for a person at a terminal: its
  // CLI meets the 401, discovers the metadata, registers (DCR), prints the authorization URL and
  // waits on its loopback callback; the person (Chromium here) signs in and consents; the CLI
  // exchanges the code with its PKCE verifier and makes the call. A second run reuses its stored tokens.
  describe('the MCP Inspector’s own sign-in (its CLI, consent in Chromium)', () => {
    let home: string;
    let inspectorCallback: string;
    let inspectorClientId: string;
    const mcpUrl = () => `${svc.url}/mcp`;
    const cliArgs = (...method: string[]) => [
      mcpUrl(),
      '--transport',
      'http',
      '--callback-url',
      inspectorCallback,
      '--format',
      'json',
      ...method,
    ];

    before(async () => {
      home = inspectorHome('inspector-oauth');
      inspectorCallback = `http://127.0.0.1:${await freePort()}/oauth/callback`;
    });

    it('discovers, registers, signs in with PKCE through the consent page, and lists the tools', async () => {
      // No TTY here: MCP_AUTO_OPEN_ENABLED=true is the Inspector's documented admission of interactive OAuth.
      const cli = startInspector(cliArgs('--method', 'tools/list'), home, { MCP_AUTO_OPEN_ENABLED: 'true' });
      try {
        const [, printed] = await cli.stderrMatch(/Please navigate to: (\S+)/);
        const authUrl = new URL(printed);
        expect(authUrl.origin + authUrl.pathname).to.equal(`${svc.url}/oauth/authorize`);
        expect(authUrl.searchParams.get('code_challenge_method')).to.equal('S256');
        expect(authUrl.searchParams.get('code_challenge')).to.match(/^[\w-]{43}$/);
        expect(authUrl.searchParams.get('resource')).to.equal(mcpUrl());
        expect(authUrl.searchParams.get('redirect_uri')).to.equal(inspectorCallback);
        inspectorClientId = authUrl.searchParams.get('client_id')!;
        expect(inspectorClientId, 'registered by DCR').to.match(/^dcr_/);
        const query = await consent(owner, authUrl, { uncheck: ['codes.create'] });
        expect(query.get('iss')).to.equal(svc.url);
      } catch (err) {
        cli.kill();
        throw err;
      }
      const run = await cli.done;
      expect(run.code, run.stderr).to.equal(0);
      const listed = JSON.parse(run.stdout).result as { tools: { name: string }[] };
      expect(listed.tools.map((t) => t.name)).to.include.members(['codes_list', 'codes_create']);
      // The grant is a connected app of the organization, under the client the Inspector registered.
      const apps = (await svc.get('/v1/tokens', apiToken)).body.data.filter(
        (t: { connected_app: { client_id: string } | null }) => t.connected_app?.client_id === inspectorClientId,
      );
      expect(apps, 'one connected app for the Inspector').to.have.length(1);
      expect(apps[0].connected_app.redirect_host).to.equal(new URL(inspectorCallback).host);
      expect(apps[0].abilities).to.include('codes.view').and.not.include('codes.create');
    });

    it('calls a granted tool with its stored tokens, and gets a tool error for an ability left unticked', async () => {
      // No interactive sign-in allowed now: the tokens of the first run must do.
      const listed = await runInspector(
        cliArgs('--stored-auth-only', '--method', 'tools/call', '--tool-name', 'codes_list'),
        home,
      );
      expect(listed.code, listed.stderr).to.equal(0);
      const result = JSON.parse(listed.stdout).result;
      expect(result.isError).to.not.equal(true);
      // The code the DCR client made above (slugs carry the organization's path).
      expect(result.structuredContent.data.map((c: { slug: string }) => c.slug)).to.include('acme/from-dcr');
      const refused = await runInspector(
        cliArgs(
          '--stored-auth-only',
          '--method',
          'tools/call',
          '--tool-name',
          'codes_create',
          '--tool-args-json',
          JSON.stringify({ slug: 'from-inspector', destination: 'https://example.com/inspector' }),
        ),
        home,
      );
      // Exit 5 is the Inspector's "tool error"; the body is REST's 403.
      expect(refused.code, refused.stderr).to.equal(5);
      const toolError = JSON.parse(refused.stdout).result;
      expect(toolError.isError).to.equal(true);
      expect(JSON.parse(toolError.content[0].text)).to.include({ code: 'forbidden', required_ability: 'codes.create' });
    });
  });

  describe('refusals', () => {
    let clientId: string;
    before(async () => {
      clientId = await registerRaw('Refusals');
    });

    it('refuses a wrong code_verifier with invalid_grant', async () => {
      const { code } = await rawCode(clientId);
      const res = await exchange(clientId, code, pkce().verifier);
      expect(res.status).to.equal(400);
      expect(res.body.error).to.equal('invalid_grant');
      expect(res.headers.get('cache-control')).to.equal('no-store');
    });

    it('refuses a code used twice with invalid_grant and revokes what the first use gave', async () => {
      const { code, verifier } = await rawCode(clientId);
      const first = await exchange(clientId, code, verifier);
      expect(first.status).to.equal(200);
      expect(first.body).to.include({ token_type: 'Bearer', expires_in: 3600 });
      expect(await mcpStatus(first.body.access_token)).to.equal(200);
      const second = await exchange(clientId, code, verifier);
      expect(second.status).to.equal(400);
      expect(second.body.error).to.equal('invalid_grant');
      expect(await mcpStatus(first.body.access_token)).to.equal(401);
    });

    it('refuses a redirect URI that differs by one character: an error page, nothing sent to it', async () => {
      const { challenge } = pkce();
      const res = await fetch(requestUrl(clientId, challenge, { redirect_uri: `${redirectUri}x` }), {
        redirect: 'manual',
      });
      expect(res.status).to.equal(400);
      expect(res.headers.get('location')).to.equal(null);
      expect(await res.text()).to.include('invalid_request');
      // At the token endpoint too.
      const { code, verifier } = await rawCode(clientId);
      const swapped = await exchange(clientId, code, verifier, { redirect_uri: `${redirectUri}x` });
      expect(swapped.body.error).to.equal('invalid_grant');
    });

    it('accepts the loopback redirect URI on another port, as OAuth 2.1 allows for native apps', async () => {
      const { challenge } = pkce();
      const other = `http://127.0.0.1:${callbackPort + 1}/callback`;
      const res = await fetch(requestUrl(clientId, challenge, { redirect_uri: other }), { redirect: 'manual' });
      expect(res.status).to.equal(200);
      expect(await res.text()).to.include('Sign in to connect an application');
    });

    it('refuses a token for another resource with invalid_target, and an MCP token at REST', async () => {
      const { challenge } = pkce();
      const res = await fetch(requestUrl(clientId, challenge, { state: 's', resource: 'https://other.example/mcp' }), {
        redirect: 'manual',
      });
      expect(res.status).to.equal(303);
      const back = new URL(res.headers.get('location')!);
      expect(back.origin + back.pathname).to.equal(redirectUri);
      expect(back.searchParams.get('error')).to.equal('invalid_target');
      expect(back.searchParams.get('state')).to.equal('s');
      const { code, verifier } = await rawCode(clientId);
      const other = await exchange(clientId, code, verifier, { resource: 'https://other.example/mcp' });
      expect(other.status).to.equal(400);
      expect(other.body.error).to.equal('invalid_target');
    });

    it('refuses an authorization request without PKCE S256, or with an unknown scope, at the redirect URI', async () => {
      const base = { response_type: 'code', client_id: clientId, redirect_uri: redirectUri, state: 'q' };
      const cases: [Record<string, string>, string][] = [
        [{}, 'invalid_request'],
        [{ code_challenge: 'x'.repeat(43), code_challenge_method: 'plain' }, 'invalid_request'],
        [
          { code_challenge: pkce().challenge, code_challenge_method: 'S256', scope: 'mcp.access members.manage' },
          'invalid_scope',
        ],
        [
          { code_challenge: pkce().challenge, code_challenge_method: 'S256', response_type: 'token' },
          'unsupported_response_type',
        ],
      ];
      for (const [extra, error] of cases) {
        const res = await fetch(authorizeUrl({ ...base, ...extra }), { redirect: 'manual' });
        expect(res.status, JSON.stringify(extra)).to.equal(303);
        expect(new URL(res.headers.get('location')!).searchParams.get('error')).to.equal(error);
      }
    });

    it('refuses a client metadata document on a private address (the webhooks’ SSRF rules)', async () => {
      const res = await fetch(requestUrl(`https://127.0.0.1:${privatePort}/oauth/client.json`, pkce().challenge), {
        redirect: 'manual',
      });
      expect(res.status).to.equal(400);
      expect(res.headers.get('location')).to.equal(null);
      const page = await res.text();
      expect(page).to.include('invalid_client');
      expect(page).to.match(/private, loopback or link-local/);
    });

    it('refuses an http client id and a document whose client_id is not its URL', async () => {
      for (const id of [
        `http://localhost:${cimdPort}/oauth/client.json`,
        `https://localhost:${cimdPort}/oauth/copy.json`,
      ]) {
        const res = await fetch(authorizeUrl({ response_type: 'code', client_id: id, redirect_uri: redirectUri }), {
          redirect: 'manual',
        });
        expect(res.status, id).to.equal(400);
        const page = await res.text();
        expect(page).to.include('invalid_client');
        expect(page).to.match(id.startsWith('http:') ? /must use https/ : /client_id must be the URL/);
      }
    });

    it('refuses to show the consent page in a frame', async () => {
      const { challenge } = pkce();
      const target = requestUrl(clientId, challenge);
      const res = await fetch(target, { redirect: 'manual' });
      expect(res.headers.get('content-security-policy')).to.include("frame-ancestors 'none'");
      expect(res.headers.get('x-frame-options')).to.equal('DENY');
      const page: Page = await owner.newPage();
      try {
        await page.goto(`http://127.0.0.1:${callbackPort}/frame?src=${encodeURIComponent(target)}`);
        await page.waitForLoadState('load');
        const frame = page.frames().find((f) => f !== page.mainFrame());
        expect(frame, 'the iframe exists').to.not.equal(undefined);
        // Chromium blocks the framed document: nothing of the consent page is in the frame.
        const forms = await frame!
          .locator('form')
          .count()
          .catch(() => 0);
        expect(forms).to.equal(0);
        expect(
          await frame!
            .locator('text=Connect an application')
            .count()
            .catch(() => 0),
        ).to.equal(0);
      } finally {
        await page.close();
      }
    });

    it('refuses a consent without the session’s CSRF token', async () => {
      const form = new URLSearchParams({
        response_type: 'code',
        client_id: clientId,
        redirect_uri: redirectUri,
        code_challenge: pkce().challenge,
        code_challenge_method: 'S256',
        action: 'allow',
        org_ulid: orgUlid,
      });
      const res = await fetch(`${svc.url}/oauth/authorize`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: form,
        redirect: 'manual',
      });
      expect(res.status).to.equal(403);
      expect(res.headers.get('location')).to.equal(null);
    });
  });

  describe('abilities never beyond the role', () => {
    it('grants an editor no ability its role lacks, whatever is ticked', async () => {
      const org = await requireOrganization(svc.app.db, orgUlid);
      await addMember(svc.app, org, 'editor@acme.example', 'editor');
      const link = (await qrctl(svc.app, ['user', 'login-link', '--email', 'editor@acme.example'])) as {
        sign_in_link: string;
      };
      await redeemLink(svc.app, linkSecret(link.sign_in_link), { password: PASSWORD }, CLIENT);
      const editor = await browser.newContext();
      try {
        const clientId = await registerRaw('Editor app');
        const { verifier, challenge } = pkce();
        const query = await consent(
          editor,
          requestUrl(clientId, challenge, { scope: 'mcp.access codes.view domains.manage wallet.view' }),
          { email: 'editor@acme.example' },
        );
        const tokens = (await exchange(clientId, query.get('code')!, verifier)).body;
        expect(tokens.scope.split(' ').sort()).to.deep.equal(['codes.view', 'mcp.access']);
      } finally {
        await editor.close();
      }
    });

    it('answers access_denied at the redirect URI when the person denies', async () => {
      const clientId = await registerRaw('Denied app');
      const query = await consent(owner, requestUrl(clientId, pkce().challenge, { state: 'd' }), { deny: true });
      expect(query.get('error')).to.equal('access_denied');
      expect(query.get('state')).to.equal('d');
      expect(query.get('code')).to.equal(null);
    });
  });

  // Last: it uses up the registrations one address may make in an hour.
  describe('registration limits', () => {
    it('refuses a confidential client at registration, and rate-limits registrations per address', async () => {
      const bad = await fetch(`${svc.url}/oauth/register`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ redirect_uris: ['http://evil.example/cb'] }),
      });
      expect(bad.status).to.equal(400);
      expect((await bad.json()).error).to.equal('invalid_redirect_uri');
      let limited: Response | undefined;
      for (let i = 0; i < 11 && !limited; i++) {
        const res = await fetch(`${svc.url}/oauth/register`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ client_name: `n${i}`, redirect_uris: [redirectUri] }),
        });
        if (res.status === 429) limited = res;
        else expect(res.status).to.equal(201);
      }
      expect(limited, 'a registration was refused').to.not.equal(undefined);
      // The wait until the oldest registration of the hour leaves it (test/integration/oauth-clients.test.ts).
      expect(Number(limited!.headers.get('retry-after'))).to.be.within(1, 3600);
      expect((await limited!.json()).error).to.equal('temporarily_unavailable');
    });
  });
});
