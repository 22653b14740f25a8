// Baseline forwarders the gateway is measured against: a bare http-proxy-3 pass-through (no body
// parsing) and a bare undici Pool forwarder that parses the JSON body and rewrites `model`.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createProxyServer } from 'http-proxy-3';
import { Pool } from 'undici';
import { announceReady, isMainModule } from './child.ts';

export type ForwarderKind = 'http-proxy-3' | 'http-proxy-3-noagent' | 'undici';

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'proxy-connection', 'upgrade', 'te', 'trailer']);

function listen(server: http.Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

function sendError(res: http.ServerResponse, status: number, message: string): void {
  if (res.headersSent) { res.destroy(); return; }
  const body = JSON.stringify({ error: { message, type: 'forwarder_error' } });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
}

/**
 * http-proxy-3, bytes through untouched. With `keepAlive` (the baseline the ratios use) it gets
 * a keep-alive agent; without, the library default `agent: false` opens a connection per request.
 */
export async function startHttpProxyForwarder(target: string, keepAlive = true): Promise<{ server: http.Server; port: number }> {
  const agent = keepAlive ? new http.Agent({ keepAlive: true, maxSockets: 256 }) : false;
  const proxy = createProxyServer({ target, agent });
  proxy.on('error', (err, _req, res) => {
    if (res instanceof http.ServerResponse) sendError(res, 502, err.message);
    else res.destroy();
  });
  const server = http.createServer({ keepAliveTimeout: 60_000 }, (req, res) => proxy.web(req, res));
  return { server, port: await listen(server) };
}

/** Strips a `provider/` prefix, the same rewrite the gateway does for a pass-through route. */
function upstreamModel(model: unknown): unknown {
  if (typeof model !== 'string') return model;
  const slash = model.indexOf('/');
  return slash < 0 ? model : model.slice(slash + 1);
}

/**
 * undici Pool forwarder: read the whole JSON body, parse, rewrite `model`, re-serialise, send
 * with Pool.request, then pipe the response back chunk by chunk as it arrives (SSE included).
 */
export async function startUndiciForwarder(target: string, apiKey = 'sk-bench'): Promise<{ server: http.Server; port: number }> {
  const pool = new Pool(target, { connections: 256, pipelining: 1, keepAliveTimeout: 60_000 });
  const auth = `Bearer ${apiKey}`;
  const server = http.createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      } catch {
        sendError(res, 400, 'body is not JSON');
        return;
      }
      body.model = upstreamModel(body.model);
      const payload = JSON.stringify(body);
      const headers = { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)), authorization: auth };
      pool.request({ method: 'POST', path: req.url ?? '/', body: payload, headers }).then((up) => {
        const out: Record<string, string | string[]> = {};
        for (const k in up.headers) { const v = up.headers[k]; if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = v; }
        res.writeHead(up.statusCode, out);
        // A client that hangs up cancels the upstream read. (pipe, not stream.pipeline: pipeline
        // cost this forwarder about twice the CPU per request in a measurement here.)
        res.on('close', () => { if (!res.writableFinished) up.body.destroy(); });
        up.body.pipe(res);
      }).catch((err: unknown) => sendError(res, 502, err instanceof Error ? err.message : String(err)));
    });
  });
  server.on('close', () => { void pool.close(); });
  return { server, port: await listen(server) };
}

export function startForwarder(kind: ForwarderKind, target: string): Promise<{ server: http.Server; port: number }> {
  if (kind === 'undici') return startUndiciForwarder(target);
  return startHttpProxyForwarder(target, kind === 'http-proxy-3');
}

const KINDS: readonly string[] = ['http-proxy-3', 'http-proxy-3-noagent', 'undici'] satisfies ForwarderKind[];

// Child-process entry: `node bench/lib/forwarders.ts <kind> <upstream origin>`.
if (isMainModule(import.meta.url)) {
  const [kind, target] = process.argv.slice(2);
  if (!kind || !KINDS.includes(kind) || !target) {
    console.error(`usage: forwarders.ts <${KINDS.join('|')}> <http://127.0.0.1:port>`);
    process.exit(2);
  }
  const { port } = await startForwarder(kind as ForwarderKind, target);
  announceReady(port);
}
