// Operator routes: GET /health (config version, last reload error, storage, worker pool and upstream state) and GET /metrics.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson } from './envelope.ts';
import type { Services } from './services.ts';

export async function handleHealth(svc: Services, _req: IncomingMessage, res: ServerResponse): Promise<void> {
  const cfg = svc.holder.current;
  sendJson(res, 200, {
    status: svc.draining ? 'draining' : 'ok',
    config: { version: cfg.version, loaded_at: cfg.loadedAt, providers: cfg.providers.size, models: cfg.models.size },
    last_reload_error: svc.holder.lastError,
    storage: svc.store?.kind ?? null,
    in_flight: svc.inFlight,
    // threads: the size of the pools in service (0: all inline); retiring: replaced pools still finishing tasks.
    workers: { threads: svc.pools?.threads ?? 0, retiring: svc.pools?.retiring ?? 0 },
    upstreams: svc.health.snapshot(),
  });
}

export async function handleMetrics(svc: Services, _req: IncomingMessage, res: ServerResponse): Promise<void> {
  const text = svc.metrics.registry.render();
  res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
