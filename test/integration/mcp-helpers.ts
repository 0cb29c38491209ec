// Raw JSON-RPC over POST /mcp for the MCP tests (plain fetch, Accept: application/json).
import { expect } from 'chai';
import type { TestService } from '../helpers/harness.js';

export interface RpcHttp {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

export async function postMcp(
  svc: TestService,
  token: string | undefined,
  payload: unknown,
  headers: Record<string, string> = {},
): Promise<RpcHttp> {
  const h: Record<string, string> = { Accept: 'application/json', 'Content-Type': 'application/json', ...headers };
  if (token) h.Authorization = `Bearer ${token}`;
  const res = await fetch(`${svc.url}/mcp`, {
    method: 'POST',
    headers: h,
    body: typeof payload === 'string' ? payload : JSON.stringify(payload),
  });
  const text = await res.text();
  let body: unknown = text;
  if (text && res.headers.get('content-type')?.includes('json')) body = JSON.parse(text);
  return { status: res.status, headers: res.headers, text, body };
}

let nextId = 1;

/** A request; returns the HTTP answer (the JSON-RPC response is .body). */
export function rpc(
  svc: TestService,
  token: string | undefined,
  method: string,
  params?: unknown,
  headers?: Record<string, string>,
) {
  const msg: Record<string, unknown> = { jsonrpc: '2.0', id: nextId++, method };
  if (params !== undefined) msg.params = params;
  return postMcp(svc, token, msg, headers);
}

export const STATELESS_VERSION = '2026-07-28';
export const statelessMeta = {
  'io.modelcontextprotocol/protocolVersion': STATELESS_VERSION,
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

/**
 * A 2026-07-28 request as the revision wants it: _meta in params, and the mirror headers
 * (MCP-Protocol-Version, Mcp-Method, Mcp-Name for a tools/call); `headers` override them.
 */
export function statelessRpc(
  svc: TestService,
  token: string | undefined,
  method: string,
  params: Record<string, unknown> = {},
  headers: Record<string, string> = {},
) {
  const mirror: Record<string, string> = { 'MCP-Protocol-Version': STATELESS_VERSION, 'Mcp-Method': method };
  if (method === 'tools/call' && typeof params.name === 'string') mirror['Mcp-Name'] = params.name;
  return rpc(svc, token, method, { _meta: statelessMeta, ...params }, { ...mirror, ...headers });
}

export interface ToolAnswer {
  http: RpcHttp;
  isError: boolean;
  /** The parsed JSON of the single text content item. */
  payload: any;
}

/** tools/call that must come back as HTTP 200 with a result of one text item. */
export async function callTool(
  svc: TestService,
  token: string,
  name: string,
  args: Record<string, unknown> = {},
): Promise<ToolAnswer> {
  const http = await rpc(svc, token, 'tools/call', { name, arguments: args });
  expect(http.status, http.text).to.equal(200);
  expect(http.body.jsonrpc).to.equal('2.0');
  expect(http.body.error, http.text).to.equal(undefined);
  const result = http.body.result;
  expect(result.content).to.have.length(1);
  expect(result.content[0].type).to.equal('text');
  expect(result.isError).to.be.a('boolean');
  return { http, isError: result.isError, payload: JSON.parse(result.content[0].text) };
}

/** A tool call that must succeed. */
export async function toolOk(svc: TestService, token: string, name: string, args: Record<string, unknown> = {}) {
  const answer = await callTool(svc, token, name, args);
  expect(answer.isError, JSON.stringify(answer.payload)).to.equal(false);
  return answer.payload;
}

/** A tool call that must fail as a tool error; returns the REST error body. */
export async function toolError(svc: TestService, token: string, name: string, args: Record<string, unknown> = {}) {
  const answer = await callTool(svc, token, name, args);
  expect(answer.isError, JSON.stringify(answer.payload)).to.equal(true);
  return answer.payload;
}

/** Headers that must match between two answers (the per-request ones left out). */
export function comparableHeaders(h: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  h.forEach((v, k) => {
    if (!['date', 'x-request-id', 'connection', 'keep-alive'].includes(k)) out[k] = v;
  });
  return out;
}
