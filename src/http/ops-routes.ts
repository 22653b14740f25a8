// Operator routes: GET /health (liveness: cheap, from memory: config, last reload error, settings that
// need a restart, the last dependency probes, writer, limiter, workers, upstreams, router), GET /health/ready (readiness:
// probes the dependencies, 503 when one the gateway needs is down) and GET /metrics.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson } from './envelope.ts';
import type { Services } from './services.ts';

export async function handleHealth(svc: Services, req: IncomingMessage, res: ServerResponse): Promise<void> {
  // `?ready=1` is the readiness view under the liveness path, for probes that take one URL.
  if (req.url?.includes('ready=1')) return handleReady(svc, req, res);
  const cfg = svc.holder.current;
  const restart = svc.holder.restartRequired;
  const last = svc.readiness?.last ?? null;
  const w = svc.writerStats?.();
  sendJson(res, 200, {
    // Liveness answers 200 whatever the dependencies (restarting would not fix them); the status says what is wrong.
    status: svc.draining ? 'draining' : last !== null && !last.ready ? 'degraded' : restart.length > 0 ? 'restart required' : 'ok',
    config: { version: cfg.version, loaded_at: cfg.loadedAt, providers: cfg.providers.size, models: cfg.models.size },
    last_reload_error: svc.holder.lastError,
    // Settings changed in the files that only a restart applies (names only; values may be secrets).
    restart_required: restart,
    ready: last === null ? null : last.ready,
    dependencies: last === null ? null : { checked_at: last.checked_at, ...Object.fromEntries(Object.entries(last.checks).map(([k, c]) => [k, { ok: c.ok, ...(c.error ? { error: c.error } : {}) }])) },
    storage: svc.store?.kind ?? null,
    writer: w ? { queued: w.queued, queued_bytes: w.queuedBytes, dropped: w.dropped, rejected: w.rejected, repaired: w.repaired, failures: w.failures } : null,
    in_flight: svc.inFlight,
    // The key limiter: its backend, and for Redis the circuit breaker (closed, open, half-open: since
    // when, the last error), whether it fails open, and budget counters being re-seeded. null without auth.
    limiter: limiterView(svc),
    // The catalog refresh: overlay served, last run and the sources that failed in it (their last good data is kept).
    catalog: svc.catalog?.status() ?? null,
    // threads: the size of the pools in service (0: all inline); retiring: replaced pools still finishing tasks.
    workers: { threads: svc.pools?.threads ?? 0, retiring: svc.pools?.retiring ?? 0 },
    upstreams: svc.health.snapshot(),
    // Router mode: the learned state routed with, and decisions waiting to be recorded or dropped unrecorded. null when off.
    router: svc.router ? { state_version: svc.router.learning.state.version, decisions: svc.router.recording() } : null,
  });
}

function limiterView(svc: Services): Record<string, unknown> | null {
  const l = svc.limiter?.status();
  if (!l) return null;
  if (l.backend === 'memory') return { backend: 'memory' };
  const b = l.breaker;
  return {
    backend: 'redis', fail_open: l.failOpen, reseeding: l.reseeding, replicas: l.replicas,
    breaker: { state: b.state, since: b.since, last_error: b.lastError, last_error_at: b.lastErrorAt, opened: b.opened },
  };
}

/** 200 when every dependency the gateway needs answers, else 503; the body names each check either way. */
export async function handleReady(svc: Services, _req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (!svc.readiness) { sendJson(res, 200, { ready: !svc.draining, checks: {} }); return; }
  const r = await svc.readiness.check();
  sendJson(res, r.ready ? 200 : 503, r);
}

export async function handleMetrics(svc: Services, _req: IncomingMessage, res: ServerResponse): Promise<void> {
  const text = svc.metrics.registry.render();
  res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
