// Which settings a config reload can apply to the running gateway and which need a restart, and what
// changed between two configs, named as in gateway.yaml (server.request_timeout_ms). The reload log,
// /health and `check` use these lists, so no change is ever silently ignored.
import type { Server } from 'node:http';
import type { Config, ServerSettings } from './types.ts';

/**
 * Read once at start: the listening socket (host, port), the connections to storage and Redis
 * (their URLs and the SQLite file), and the dashboard's services (whether it runs, and the live tail's
 * poll of other replicas' records, set up with them). A reload that changes one keeps the running value and reports
 * "restart required" until the values match again. (storage.redis_fail_open applies on reload: the
 * limiter and the readiness probe read the new value for the next request.)
 */
export const RESTART_ONLY: readonly string[] = [
  'server.host', 'server.port', 'storage.sqlite_path', 'storage.database_url', 'storage.redis_url',
  'dashboard.enabled', 'dashboard.tail_poll_ms',
];

/** Sections of the compiled config that hold settings (the rest is the catalog and providers). */
const SECTIONS = ['server', 'auth', 'storage', 'upstream', 'reload', 'workers', 'dashboard'] as const;

const snake = (k: string): string => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** Every setting as `section.name` (snake case, as in gateway.yaml) -> its value (scalars only). */
export function settingsOf(cfg: Config): Map<string, unknown> {
  const out = new Map<string, unknown>();
  const walk = (prefix: string, v: unknown): void => {
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) walk(`${prefix}.${snake(k)}`, x);
    } else out.set(prefix, Array.isArray(v) ? JSON.stringify(v) : v);
  };
  const c = cfg as unknown as Record<string, unknown>;
  for (const s of SECTIONS) if (c[s] !== undefined) walk(s, c[s]);
  return out;
}

/** Settings whose values differ, sorted. Names only: values may be secrets (admin key, database URL). */
export function changedSettings(prev: Config, next: Config): string[] {
  const a = settingsOf(prev);
  const b = settingsOf(next);
  const out: string[] = [];
  for (const k of new Set([...a.keys(), ...b.keys()])) if (a.get(k) !== b.get(k)) out.push(k);
  // Per-origin connection settings live with the providers: an origin added, removed or re-pointed.
  const origins = (c: Config): string => [...new Set([...c.providers.values()].map((p) => p.origin))].sort().join(' ');
  if (origins(prev) !== origins(next)) out.push('providers.origins');
  return out.sort();
}

/** Restart-only settings whose configured value differs from the one the process runs with. */
export function restartRequired(running: Config, next: Config): string[] {
  const a = settingsOf(running);
  const b = settingsOf(next);
  return RESTART_ONLY.filter((k) => a.get(k) !== b.get(k));
}

/**
 * Applies the server's timeouts and header limit to the live server object. Node reads them there:
 * keep_alive_timeout per response, max_header_bytes per new connection, headers_timeout and
 * request_timeout at each connections check (every connectionsCheckingInterval: 5 s, src/http/server.ts).
 * Body size, JSON depth and the legacy prefix are read per request; the shutdown grace at SIGTERM.
 */
export function applyServerSettings(server: Server, s: ServerSettings): void {
  server.headersTimeout = s.headersTimeoutMs;
  server.requestTimeout = s.requestTimeoutMs;
  server.keepAliveTimeout = s.keepAliveTimeoutMs;
  // Typed as read-only by @types/node; Node's connection listener reads it for every new connection.
  (server as Server & { maxHeaderSize: number }).maxHeaderSize = s.maxHeaderBytes;
}
