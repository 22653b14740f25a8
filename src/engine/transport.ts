// The transport for routes whose bodies the gateway interprets: keep-alive undici Pools per upstream
// origin (the fastest client measured in bench/overhead), shared across config reloads.
import { Pool, type Dispatcher } from 'undici';
import type { UpstreamSettings } from '../config/types.ts';

const pools = new Map<string, Pool>();

function poolFor(origin: string, s: UpstreamSettings): Pool {
  let p = pools.get(origin);
  if (!p) {
    p = new Pool(origin, {
      connections: s.connectionsPerOrigin,
      connect: { timeout: s.connectTimeoutMs },
      keepAliveTimeout: 30_000,
      pipelining: 1,
    });
    pools.set(origin, p);
  }
  return p;
}

export type UpstreamCall = {
  origin: string; path: string; method: 'POST' | 'GET'; headers: Record<string, string>; body: string | Buffer | null;
  signal: AbortSignal; settings: UpstreamSettings; firstByteTimeoutMs: number;
};

/** Sends one request; resolves once response headers arrive (connect and first-byte timeouts apply). */
export function send(c: UpstreamCall): Promise<Dispatcher.ResponseData> {
  return poolFor(c.origin, c.settings).request({
    origin: c.origin,
    path: c.path,
    method: c.method,
    headers: c.headers,
    body: c.body,
    signal: c.signal,
    headersTimeout: c.firstByteTimeoutMs,
    bodyTimeout: c.settings.idleTimeoutMs,
  });
}

export async function closeTransports(): Promise<void> {
  const all = [...pools.values()];
  pools.clear();
  await Promise.allSettled(all.map((p) => p.close()));
}
