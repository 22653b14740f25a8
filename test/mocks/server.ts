// The HTTP harness under every mock upstream: listens on 127.0.0.1:0 with keep-alive, records
// requests, applies queued or header faults, checks auth, then hands off to the provider spec.
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FAULT_HEADER, FaultQueue, StreamSink, isStatusFault, sendBody, sleep } from './faults.ts';
import type { Fault, FaultFrames } from './faults.ts';

export interface RecordedRequest {
  method: string;
  /** Path with query string, as received. */
  path: string;
  headers: IncomingHttpHeaders;
  /** Parsed JSON when the body is JSON, else the raw text ('' when empty). */
  body: unknown;
  /** Epoch milliseconds when the body was fully read. */
  time: number;
}

export interface MockUpstream {
  /** Base URL as the provider's base_url setting would hold it. */
  url: string;
  port: number;
  requests: RecordedRequest[];
  /** Queue faults, consumed one per request in order. */
  fault(f: Fault | Fault[]): void;
  /** Clear recorded requests, queued faults, caches and id counters. */
  reset(): void;
  close(): Promise<void>;
}

export interface MockOptions {
  /** Require exactly this key (else any non-empty credential passes). */
  apiKey?: string;
  /** Let requests without any credential through (keyless servers such as Ollama); OpenAI flavours only. */
  authOptional?: boolean;
  /** Pause between stream chunks, in milliseconds (default 0). */
  chunkDelayMs?: number;
  /** Replace the default reply text (`Echo: <first 40 chars>`) derived from the last user text. */
  reply?: (lastUserText: string) => string;
}

/** How a provider handler answers; every path honours the request's fault. */
export interface Reply {
  json(status: number, body: unknown, headers?: Record<string, string>): void;
  /** An error in the provider's own shape. */
  error(status: number, message: string): void;
  /** Starts a streamed response; write one event or frame per `write`. */
  stream(contentType: string, headers?: Record<string, string>): StreamSink;
  /** Raw bytes with a given content type (for binary non-JSON bodies). */
  raw(status: number, body: string | Buffer, headers: Record<string, string>): void;
}

export interface ProviderSpec {
  basePath: string;
  /** The chunk `malformedSse` injects into a stream. */
  garbage: string | Buffer;
  /** The frames the `inject` faults send, in this provider's dialect for the endpoint at `path`. */
  frames?(path: string): FaultFrames;
  /** Headers on every response (request ids and the like). */
  headers(): Record<string, string>;
  /** The error body in the provider's shape; `headers` are this response's headers (ids). */
  errorBody(status: number, message: string, headers: Record<string, string>): { body: unknown; headers?: Record<string, string> };
  /** A credential problem, or null when the request may proceed. */
  checkAuth(req: RecordedRequest, url: URL, apiKey: string | undefined): { status: number; message: string } | null;
  handle(req: RecordedRequest, url: URL, reply: Reply): Promise<void> | void;
  reset(): void;
}

const DEFAULT_MESSAGES: Record<number, string> = {
  400: 'Invalid request (injected fault).',
  401: 'Invalid authentication (injected fault).',
  403: 'Permission denied (injected fault).',
  404: 'Not found (injected fault).',
  408: 'Request timed out (injected fault).',
  413: 'Request too large (injected fault).',
  429: 'Rate limit exceeded (injected fault).',
  500: 'Internal server error (injected fault).',
  502: 'Bad gateway (injected fault).',
  503: 'Service unavailable (injected fault).',
  504: 'Gateway timeout (injected fault).',
  529: 'Overloaded (injected fault).',
};

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => resolve(Buffer.concat(parts)));
    req.on('error', reject);
  });
}

function parseBody(buf: Buffer): unknown {
  const text = buf.toString('utf8');
  if (text === '') return '';
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** Starts a mock upstream for one provider spec. */
export async function startMock(spec: ProviderSpec, opts: MockOptions = {}): Promise<MockUpstream> {
  const faults = new FaultQueue();
  const requests: RecordedRequest[] = [];
  const delay = opts.chunkDelayMs ?? 0;

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = parseBody(await readBody(req));
    const recorded: RecordedRequest = {
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      headers: req.headers,
      body,
      time: Date.now(),
    };
    requests.push(recorded);
    const fault = faults.take(req.headers[FAULT_HEADER]);
    if (fault && 'hang' in fault) return;
    if (fault && 'resetConnection' in fault) {
      req.socket.resetAndDestroy();
      return;
    }
    if (fault && 'delayFirstByteMs' in fault) await sleep(fault.delayFirstByteMs);
    if (res.destroyed) return;

    const base = spec.headers();
    const reply: Reply = {
      json: (status, payload, headers) =>
        sendBody(res, status, { ...base, 'content-type': 'application/json', ...headers }, JSON.stringify(payload), fault,
          () => JSON.stringify(spec.errorBody(500, 'The server had an error while processing your request (injected fault).', base).body)),
      error: (status, message) => {
        const e = spec.errorBody(status, message, base);
        sendBody(res, status, { ...base, 'content-type': 'application/json', ...e.headers }, JSON.stringify(e.body), undefined);
      },
      stream: (contentType, headers) => {
        res.writeHead(200, { ...base, 'content-type': StreamSink.contentType(fault, contentType), 'cache-control': 'no-cache', ...headers });
        res.flushHeaders();
        return new StreamSink(res, fault, spec.garbage, delay, spec.frames?.(recorded.path));
      },
      raw: (status, payload, headers) => sendBody(res, status, { ...base, ...headers }, payload, fault),
    };

    if (isStatusFault(fault)) {
      const e = spec.errorBody(fault.status, DEFAULT_MESSAGES[fault.status] ?? `Error ${fault.status} (injected fault).`, base);
      const headers: Record<string, string> = { ...base, 'content-type': 'application/json', ...e.headers };
      if (fault.retryAfter !== undefined) headers['retry-after'] = String(fault.retryAfter);
      // A string body goes out as is (an HTML page from a proxy, say); anything else as JSON.
      if (typeof fault.body === 'string') headers['content-type'] = fault.body.startsWith('<') ? 'text/html; charset=utf-8' : 'text/plain; charset=utf-8';
      const payload = typeof fault.body === 'string' ? fault.body : JSON.stringify(fault.body !== undefined ? fault.body : e.body);
      sendBody(res, fault.status, headers, payload, undefined);
      return;
    }
    const url = new URL(recorded.path, 'http://127.0.0.1');
    const denied = spec.checkAuth(recorded, url, opts.apiKey);
    if (denied) return reply.error(denied.status, denied.message);
    await spec.handle(recorded, url, reply);
  }

  const server = createServer({ keepAlive: true }, (req, res) => {
    serve(req, res).catch((err: unknown) => {
      if (res.headersSent) res.destroy();
      else {
        const e = spec.errorBody(500, `Mock failure: ${err instanceof Error ? err.message : String(err)}`, {});
        res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify(e.body));
      }
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}${spec.basePath}`,
    port,
    requests,
    fault: (f) => faults.push(f),
    reset: () => {
      requests.length = 0;
      faults.clear();
      spec.reset();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** One SSE event: an optional `event:` line and one `data:` line of JSON (or a literal string). */
export function sse(data: unknown, event?: string): string {
  const payload = typeof data === 'string' ? data : JSON.stringify(data);
  return `${event ? `event: ${event}\n` : ''}data: ${payload}\n\n`;
}
