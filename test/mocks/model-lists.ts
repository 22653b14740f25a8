// Mock model-list endpoints for catalog refresh tests, answering in each API's documented shape and
// refusing what the real ones refuse: OpenAI-compatible GET /v1/models (Bearer; optional cursor
// pages), Anthropic GET /v1/models (x-api-key + anthropic-version; limit 1-1000, after_id pages),
// Gemini GET /v1beta/models (x-goog-api-key; pageSize capped at 1000, pageToken), Bedrock's control
// plane GET /foundation-models and GET /inference-profiles (SigV4; maxResults, nextToken), OpenRouter's
// public GET /api/v1/models and models.dev's GET /api.json. Faults per route: a status, a hang, bad JSON.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type ListRoute = 'openai' | 'anthropic' | 'gemini' | 'bedrock-models' | 'bedrock-profiles' | 'openrouter' | 'models.dev';
export type ListFault = { status: number } | { hang: true } | { body: string };

export type ModelListData = {
  openai: Array<Record<string, unknown>>;
  anthropic: Array<Record<string, unknown>>;
  gemini: Array<Record<string, unknown>>;
  bedrockModels: Array<Record<string, unknown>>;
  bedrockProfiles: Array<Record<string, unknown>>;
  openrouter: Array<Record<string, unknown>>;
  modelsDev: Record<string, unknown>;
};

export type MockModelLists = {
  url: string;
  data: ModelListData;
  /** Page size the OpenAI-compatible route uses (0: one page, as OpenAI itself answers). */
  openaiPageSize: number;
  /** Persistent fault per route until cleared. */
  faults: Map<ListRoute, ListFault>;
  /** Every request: route and query. */
  requests: Array<{ route: ListRoute; query: URLSearchParams; headers: IncomingMessage['headers'] }>;
  close(): Promise<void>;
};

export const KEYS = { openai: 'sk-openai-test', anthropic: 'sk-ant-test', gemini: 'gemini-test-key', awsKeyId: 'AKIATESTKEY' };

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** A page of `items` after the item whose `key` is `after`, at most `size` long. */
function pageOf<T extends Record<string, unknown>>(items: T[], key: string, after: string | null, size: number): { page: T[]; more: boolean } {
  const start = after === null ? 0 : items.findIndex((m) => m[key] === after) + 1;
  const page = items.slice(start, start + size);
  return { page, more: start + size < items.length };
}

export async function startMockModelLists(data: ModelListData): Promise<MockModelLists> {
  const mock: MockModelLists = { url: '', data, openaiPageSize: 0, faults: new Map(), requests: [], close: async () => {} };
  const server = createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://mock');
    const route: ListRoute | null =
      u.pathname === '/v1/models' && req.headers['anthropic-version'] !== undefined ? 'anthropic'
        : u.pathname === '/v1/models' ? 'openai'
          : u.pathname === '/v1beta/models' ? 'gemini'
            : u.pathname === '/foundation-models' ? 'bedrock-models'
              : u.pathname === '/inference-profiles' ? 'bedrock-profiles'
                : u.pathname === '/api/v1/models' ? 'openrouter'
                  : u.pathname === '/api.json' ? 'models.dev' : null;
    if (req.method !== 'GET' || route === null) return send(res, 404, { error: { message: `no route ${req.method} ${u.pathname}` } });
    mock.requests.push({ route, query: u.searchParams, headers: req.headers });
    const fault = mock.faults.get(route);
    if (fault && 'hang' in fault) return; // never answers: the client's timeout must fire
    if (fault && 'status' in fault) return send(res, fault.status, { error: { type: fault.status === 401 ? 'authentication_error' : 'api_error', message: `injected ${fault.status}` } });
    if (fault && 'body' in fault) return send(res, 200, fault.body);
    const q = u.searchParams;
    switch (route) {
      case 'openai': {
        if (req.headers.authorization !== `Bearer ${KEYS.openai}`) return send(res, 401, { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } });
        if (mock.openaiPageSize === 0) return send(res, 200, { object: 'list', data: data.openai });
        const { page, more } = pageOf(data.openai, 'id', q.get('after'), mock.openaiPageSize);
        return send(res, 200, { object: 'list', data: page, has_more: more, ...(page.length ? { first_id: page[0]!.id, last_id: page[page.length - 1]!.id } : {}) });
      }
      case 'anthropic': {
        if (req.headers['x-api-key'] !== KEYS.anthropic) return send(res, 401, { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } });
        const limit = q.has('limit') ? Number(q.get('limit')) : 20;
        if (!Number.isInteger(limit) || limit < 1 || limit > 1000) return send(res, 400, { type: 'error', error: { type: 'invalid_request_error', message: 'limit: must be between 1 and 1000' } });
        // The mock pages by 2 whatever the limit, so a client that ignores has_more misses models.
        const { page, more } = pageOf(data.anthropic, 'id', q.get('after_id'), Math.min(limit, 2));
        return send(res, 200, { data: page, has_more: more, first_id: page[0]?.id ?? null, last_id: page[page.length - 1]?.id ?? null });
      }
      case 'gemini': {
        if (req.headers['x-goog-api-key'] !== KEYS.gemini && q.get('key') !== KEYS.gemini) {
          return send(res, 403, { error: { code: 403, message: 'Method doesn\'t allow unregistered callers. Please use API Key.', status: 'PERMISSION_DENIED' } });
        }
        const size = Math.min(Number(q.get('pageSize') ?? 50), 1000, 3); // 3 per page here, to exercise pageToken
        const start = q.get('pageToken') ? Number(Buffer.from(q.get('pageToken')!, 'base64url').toString()) : 0;
        const page = data.gemini.slice(start, start + size);
        const next = start + size < data.gemini.length ? Buffer.from(String(start + size)).toString('base64url') : undefined;
        return send(res, 200, { models: page, ...(next ? { nextPageToken: next } : {}) });
      }
      case 'bedrock-models': case 'bedrock-profiles': {
        const auth = String(req.headers.authorization ?? '');
        if (!new RegExp(`^AWS4-HMAC-SHA256 Credential=${KEYS.awsKeyId}/\\d{8}/[a-z0-9-]+/bedrock/aws4_request, SignedHeaders=[a-z0-9;-]*host[a-z0-9;-]*, Signature=[0-9a-f]{64}$`).test(auth) || !req.headers['x-amz-date']) {
          return send(res, 403, { message: 'The security token included in the request is invalid.' });
        }
        if (route === 'bedrock-models') return send(res, 200, { modelSummaries: data.bedrockModels });
        const size = Math.min(Number(q.get('maxResults') ?? 1000), 1000, 2);
        const start = q.get('nextToken') ? Number(q.get('nextToken')) : 0;
        const page = data.bedrockProfiles.slice(start, start + size);
        return send(res, 200, { inferenceProfileSummaries: page, ...(start + size < data.bedrockProfiles.length ? { nextToken: String(start + size) } : {}) });
      }
      case 'openrouter': return send(res, 200, { data: data.openrouter });
      case 'models.dev': return send(res, 200, data.modelsDev);
    }
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  mock.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  mock.close = () => new Promise((ok) => { server.closeAllConnections(); server.close(() => ok()); });
  return mock;
}
