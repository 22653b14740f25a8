// The HTTP server: limits and timeouts, the route table, authentication per route, and one error path.
import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { verifyAdminKey } from './admin-auth.ts';
import { presentedKeyFromHeaders } from '../auth/keys.ts';
import type { KeyRecord } from '../store/types.ts';
import { errorBody, sendError, type Envelope } from './envelope.ts';
import { endedByTimeout } from './body.ts';
import { GatewayError, bounded } from '../gateway-error.ts';
import { createRouteTable, type Route, type RouteTable } from './routes.ts';
import { handleInference } from './inference.ts';
import { handleModels, handleModel } from './models-route.ts';
import { handleHealth, handleMetrics, handleReady } from './ops-routes.ts';
import { adminRoutes } from './admin-routes.ts';
import { adminApiRoutes } from './admin-api/router.ts';
import { dashboardRoutes } from './dashboard-static.ts';
import { handleFeedbackRoute } from './feedback-route.ts';
import { handlePassthrough } from './passthrough.ts';
import { handleRouterRank } from './router-mode.ts';
import { handleCreateResponse, handleDeleteResponse, handleGetResponse, handleInputTokens, handlePostResponseSub } from './responses-route.ts';
import { handleCompact } from './responses-compact.ts';
import { handleCountTokens } from './count-tokens-route.ts';
import type { Services } from './services.ts';

export function buildRoutes(svc: Services): RouteTable {
  const routes: Route[] = [
    { method: 'POST', pattern: '/v1/chat/completions', envelope: 'openai', auth: 'key', handler: (req, res, _p, client) => handleInference(svc, req, res, '/v1/chat/completions', 'openai-chat', client) },
    { method: 'POST', pattern: '/v1/messages', envelope: 'anthropic', auth: 'key', handler: (req, res, _p, client) => handleInference(svc, req, res, '/v1/messages', 'anthropic-messages', client) },
    { method: 'GET', pattern: '/v1/models', envelope: 'openai', auth: 'models', handler: (req, res, p) => handleModels(svc, req, res, p) },
    { method: 'GET', pattern: '/v1/models/*', envelope: 'openai', auth: 'models', handler: (req, res, p) => handleModel(svc, req, res, p) },
    { method: 'POST', pattern: '/v1/router/rank', envelope: 'openai', auth: 'key', handler: (req, res, p, client) => handleRouterRank(svc, req, res, p, client) },
    { method: 'POST', pattern: '/v1/feedback', envelope: 'openai', auth: 'key', handler: (req, res, _p, client) => handleFeedbackRoute(svc, req, res, client) },
    { method: 'GET', pattern: '/health', envelope: 'openai', auth: 'none', handler: (req, res) => handleHealth(svc, req, res) },
    { method: 'GET', pattern: '/health/ready', envelope: 'openai', auth: 'none', handler: (req, res) => handleReady(svc, req, res) },
    { method: 'GET', pattern: '/metrics', envelope: 'openai', auth: 'none', handler: (req, res) => handleMetrics(svc, req, res) },
    ...adminRoutes(svc),
    ...dashboardRoutes(svc),
    ...adminApiRoutes(svc),
    { method: 'POST', pattern: '/v1/messages/count_tokens', envelope: 'anthropic', auth: 'key', handler: (req, res, _p, client) => handleCountTokens(svc, req, res, client) },
    { method: 'POST', pattern: '/v1/responses', envelope: 'openai', auth: 'key', handler: (req, res, _p, client) => handleCreateResponse(svc, req, res, client) },
    { method: 'POST', pattern: '/v1/responses/input_tokens', envelope: 'openai', auth: 'key', handler: (req, res, _p, client) => handleInputTokens(svc, req, res, client) },
    { method: 'POST', pattern: '/v1/responses/compact', envelope: 'openai', auth: 'key', handler: (req, res, _p, client) => handleCompact(svc, req, res, client) },
    { method: 'GET', pattern: '/v1/responses/*', envelope: 'openai', auth: 'key', handler: (req, res, p, client) => handleGetResponse(svc, req, res, p, client) },
    { method: 'POST', pattern: '/v1/responses/*', envelope: 'openai', auth: 'key', handler: (req, res, p, client) => handlePostResponseSub(svc, req, res, p, client) },
    { method: 'DELETE', pattern: '/v1/responses/:id', envelope: 'openai', auth: 'key', handler: (req, res, p, client) => handleDeleteResponse(svc, req, res, p, client) },
    // Other OpenAI-style JSON routes (embeddings, moderations, ...) go to the provider named by `model`.
    { method: 'POST', pattern: '/v1/*', envelope: 'openai', auth: 'key', handler: (req, res, p, client) => handlePassthrough(svc, req, res, p, client) },
  ];
  return createRouteTable(routes);
}

/**
 * Authenticates synchronously against the in-memory key ring and returns the caller's key (null
 * on routes that need none); only a well-formed key the ring does not know yet (created a moment
 * ago elsewhere) returns a promise, for the reload that may find it. The key travels to the
 * handler as an argument, not through a side table keyed by request.
 */
function authenticate(svc: Services, req: IncomingMessage, route: Route): KeyRecord | null | Promise<KeyRecord | null> {
  const cfg = svc.holder.current;
  if (route.auth === 'none') return null;
  if (route.auth === 'admin') {
    if (!cfg.auth.adminKey) throw new GatewayError('not_implemented', 'the admin API is disabled: set GATEWAY_ADMIN_KEY to enable it');
    // Failed attempts are limited per client address; a blocked address is refused even with the right key.
    if (!verifyAdminKey(svc, req, presentedKeyFromHeaders(req.headers))) throw new GatewayError('invalid_api_key', 'invalid or missing admin key');
    return null;
  }
  if (!cfg.auth.enabled) return null;
  const keys = svc.keys;
  // Auth turned on by a reload: the key ring is being built. Refuse meanwhile; never serve the route open.
  if (!keys) throw new GatewayError('not_ready', 'authentication is starting (the API keys are loading); retry in a moment', { headers: { 'retry-after': '1' } });
  const presented = presentedKeyFromHeaders(req.headers);
  if (route.auth === 'models' && cfg.auth.modelsPublic && presented === undefined) return null;
  try {
    return keys.authenticate(presented);
  } catch (e) {
    if (!(e instanceof GatewayError && e.code === 'invalid_api_key')) throw e;
    return keys.refreshForUnknown(presented).then((found) => {
      if (found === 'unavailable') {
        throw new GatewayError('storage_unavailable', 'This API key is not among the keys this gateway holds, and the key store cannot be read to look for it (a key created moments ago is stored there); retry in a moment.', { headers: { 'retry-after': '5' } });
      }
      if (found === 'unknown') throw e;
      return keys.authenticate(presented);
    });
  }
}

/** Node's connections check (see createServer below): the timeouts fire at most this late. */
export const CONNECTIONS_CHECK_MS = 5000;

export function createGatewayServer(svc: Services): Server {
  const s = svc.holder.current.server;
  const table = buildRoutes(svc);
  const server = createServer({
    headersTimeout: s.headersTimeoutMs,
    requestTimeout: s.requestTimeoutMs,
    keepAliveTimeout: s.keepAliveTimeoutMs,
    maxHeaderSize: s.maxHeaderBytes,
    // How often Node checks the headers and request timeouts (30 s by default, so a request trickled a byte
    // at a time was cut up to 30 s past server.request_timeout_ms): a walk over the open connections.
    connectionsCheckingInterval: CONNECTIONS_CHECK_MS,
    noDelay: true,
  }, onRequest);
  function onRequest(req: IncomingMessage, res: ServerResponse): void {
    const socket = req.socket;
    answering.set(socket, res);
    // Dropped once answered whole: an idle keep-alive connection must not hold its last request (its
    // handler's closures hold the body: ~10 MB a connection after a 5 MB request).
    res.once('close', forgetAnswered);
    // Last line of defence: whatever escapes a handler becomes a 500 on this request, never a dead process.
    handle(req, res).catch((e: unknown) => { console.error('unhandled error in request handler:', e); sendError(res, e, 'openai'); });
  }
  // Expect: 100-continue: the go-ahead goes only to a body the gateway would read; one declared past the
  // body limit gets its 413 at once, and the client never sends it.
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    if (!(Number(req.headers['content-length']) > svc.holder.current.server.bodyLimitBytes)) res.writeContinue();
    onRequest(req, res);
  });
  // Any other expectation (Expect: 200-ok): a 417 in the route's envelope (Node's own has an empty body).
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const expect = String(req.headers.expect ?? '');
    sendError(res, new GatewayError('expectation_failed', `Expect: ${bounded(expect)} cannot be met; the gateway understands only Expect: 100-continue`), envelopeOf(req.method ?? 'GET', req.url ?? '/'));
  });
  /** The envelope of the route a request line names (the default one when no route matches or the path does not decode). */
  const envelopeOf = (method: string, url: string): Envelope => {
    try {
      const m = table.match(method, url, svc.holder.current.server.legacyPrefix);
      return m.kind === 'ok' ? m.route.envelope : m.envelope;
    } catch { return 'openai'; }
  };
  /**
   * The latest request's response on each connection until it is answered and its body read whole: what
   * a socket-level error may still answer, and in whose envelope.
   */
  const answering = new WeakMap<Socket, ServerResponse>();
  /** A response's 'close' listener, one function for every request (no closure per request on the hot path). */
  function forgetAnswered(this: ServerResponse): void {
    const socket = this.req.socket;
    if (this.req.complete && answering.get(socket) === this) answering.delete(socket);
  }

  /**
   * The counter series of each (route pattern, status), bound once: a request then costs one Map read
   * instead of a labels object and the registry's key building. Both values are bounded (route patterns,
   * HTTP statuses); the cache is bounded all the same.
   */
  const httpSeries = new Map<string, { inc(by?: number): void }>();
  const httpSeriesFor = (route: string, status: number): { inc(by?: number): void } => {
    const key = `${status} ${route}`;
    let s = httpSeries.get(key);
    if (s === undefined) {
      if (httpSeries.size >= 4096) httpSeries.clear();
      s = svc.metrics.httpRequestsTotal.bind({ route, status: String(status) });
      httpSeries.set(key, s);
    }
    return s;
  };

  /**
   * Counts the request by route pattern and status when its response ends (499: the client left before
   * any status was sent). `close` fires once per response, so a plain listener does (no once() wrapper).
   */
  function countHttp(res: ServerResponse, route: string): void {
    res.on('close', () => httpSeriesFor(route, res.headersSent ? res.statusCode : 499).inc());
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const cfg = svc.holder.current;
    let m: ReturnType<RouteTable['match']>;
    try { m = table.match(req.method ?? 'GET', req.url ?? '/', cfg.server.legacyPrefix); } catch (e) {
      req.resume();
      sendError(res, e, 'openai');
      return;
    }
    if (m.kind !== 'ok') {
      req.resume();
      countHttp(res, '_unmatched');
      const err = m.kind === 'not_found'
        ? new GatewayError('route_not_found', `no route for ${req.method} ${m.path}`)
        : new GatewayError('method_not_allowed', `${req.method} is not allowed on ${m.path}; use ${m.allowed!.join(' or ')}`, { headers: { allow: m.allowed!.join(', ') } });
      sendError(res, err, m.envelope);
      return;
    }
    const route = m.route;
    countHttp(res, route.pattern);
    if (svc.draining && route.pattern !== '/health' && route.pattern !== '/health/ready' && route.pattern !== '/metrics') {
      req.resume();
      sendError(res, new GatewayError('shutting_down', 'the gateway is shutting down; retry on another replica'), route.envelope, { connection: 'close' });
      return;
    }
    svc.inFlight++;
    try {
      let key: KeyRecord | null;
      try {
        const found = authenticate(svc, req, route);
        key = found instanceof Promise ? await found : found;
      } catch (e) {
        svc.books.refusedAtAuth(route.pattern, e);
        throw e;
      }
      await route.handler(req, res, m.params, { key, ip: req.socket.remoteAddress ?? null });
    } catch (e) {
      req.resume();
      sendError(res, e, route.envelope);
    } finally {
      svc.inFlight--;
    }
  }

  /**
   * Malformed HTTP (a bad request line or header, headers past the size limit, a body not received within
   * the request timeout) is answered at the socket, in the envelope of the route the request line named
   * (known once a request was read, else from the bytes Node's parser failed on). A request whose answer
   * has started (an early 413 or 401 while its body was still coming) gets no second answer: the
   * connection is closed.
   */
  server.on('clientError', (err, socket) => {
    const latest = answering.get(socket as Socket);
    // The request the error is about, when it is one whose body was still coming; else a new one.
    const current = latest !== undefined && !latest.req.complete ? latest : undefined;
    if (!socket.writable || current?.headersSent || (latest?.headersSent && !latest.writableFinished)) { socket.destroy(); return; }
    const code = (err as { code?: string }).code;
    const status = code === 'HPE_HEADER_OVERFLOW' ? 431 : code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    const target = current ? { method: current.req.method ?? 'GET', url: current.req.url ?? '/' } : requestLine((err as { rawPacket?: Buffer }).rawPacket);
    const limits = svc.holder.current.server;
    const envelope: Envelope = target ? envelopeOf(target.method, target.url) : 'openai';
    const message = status === 431 ? `request headers are too large: past the limit of ${limits.maxHeaderBytes} bytes (server.max_header_bytes), as the HTTP parser counts them (many small headers count for more than their bytes)`
      : status === 408 ? `the request was not received in full within ${limits.requestTimeoutMs} ms`
      : `bad request: ${code ?? err.message}`;
    const e = status === 408 ? new GatewayError('request_timeout', message)
      : new GatewayError('bad_request', message, { status, kind: status === 431 ? 'request_too_large' : 'invalid_request' });
    // The handler still reading this request's body learns why it ends (its record says 408, not a hang-up).
    if (current && status === 408) endedByTimeout(current.req, e);
    const body = JSON.stringify(errorBody(e, envelope));
    socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
  });
  return server;
}

/** Method and target of the request line at the start of `raw` (the bytes a parse error came with), if it is one. */
function requestLine(raw: Buffer | undefined): { method: string; url: string } | null {
  if (!raw) return null;
  const m = /^([A-Z]{1,20}) (\S{1,8192}) HTTP\/1\.[01]\r?\n/.exec(raw.subarray(0, 8300).toString('latin1'));
  return m ? { method: m[1]!, url: m[2]! } : null;
}
