// Starts the gateway: config (with hot reload and SIGHUP), storage, keys, limits, the record writer,
// metrics and the HTTP server; SIGTERM drains in-flight requests and flushes records before exit.
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Server } from 'node:http';
import { ConfigHolder } from './config/reload.ts';
import type { Config } from './config/types.ts';
import { UpstreamHealth } from './engine/health.ts';
import { closeTransports } from './engine/transport.ts';
import { openStore, type OpenStoreOptions } from './store/open.ts';
import { WriteThread, withWriteThread } from './store/write-thread.ts';
import type { Store } from './store/types.ts';
import { KeyRing } from './auth/keyring.ts';
import { KeyAdmin } from './auth/admin.ts';
import { openLimiter } from './limits/open.ts';
import { RecordWriter } from './records/writer.ts';
import { createGatewayMetrics } from './metrics/gateway.ts';
import { WorkerPools } from './workers/pools.ts';
import { Bookkeeper } from './http/bookkeeping.ts';
import { createGatewayServer } from './http/server.ts';
import type { Services } from './http/services.ts';

/** GATEWAY_PG_SCHEMA (env) picks the PostgreSQL schema (default "public"), e.g. one per tenant or test run. */
export function storeOptionsFor(cfg: Config, env: NodeJS.ProcessEnv = process.env): OpenStoreOptions {
  const sqlitePath = resolve(cfg.storage.sqlitePath);
  return {
    sqlitePath,
    ...(cfg.storage.databaseUrl ? { databaseUrl: cfg.storage.databaseUrl } : {}),
    ...(cfg.storage.databaseUrl && env.GATEWAY_PG_SCHEMA ? { pgSchema: env.GATEWAY_PG_SCHEMA } : {}),
  };
}

export async function openStoreFor(cfg: Config, env: NodeJS.ProcessEnv = process.env): Promise<Store> {
  const opts = storeOptionsFor(cfg, env);
  if (!opts.databaseUrl) mkdirSync(dirname(opts.sqlitePath), { recursive: true });
  return openStore(opts);
}

export type RunningGateway = { server: Server; services: Services; url: string; stop(): Promise<void> };

/** Builds every service and listens; resolves once the port is bound. */
export async function startGateway(file: string, env: NodeJS.ProcessEnv = process.env): Promise<RunningGateway> {
  const holder = new ConfigHolder(file, env);
  const cfg = holder.current;
  const store = await openStoreFor(cfg, env);
  // Migrations ran above; the write thread opens its own connection to the same database.
  const writes = new WriteThread(storeOptionsFor(cfg, env));
  await writes.ready();
  const metrics = createGatewayMetrics();
  const writer = new RecordWriter({
    store: withWriteThread(store, writes), batchSize: cfg.storage.writer.batchSize, flushMs: cfg.storage.writer.flushMs, maxQueue: cfg.storage.writer.maxQueue,
    onError: (e) => console.error('record writer:', (e as Error).message),
  });
  metrics.attachWriter(() => writer.stats());
  const keys = cfg.auth.enabled ? new KeyRing(store, { refreshMs: cfg.auth.keyRefreshMs, onError: (what, e) => console.error(`key ring ${what} failed:`, (e as Error).message) }) : null;
  if (keys) await keys.start();
  let lastLimiterLog = 0;
  const limiter = openLimiter({
    ...(cfg.storage.redisUrl ? { redisUrl: cfg.storage.redisUrl } : {}),
    failOpen: cfg.storage.redisFailOpen,
    onError: (e) => {
      metrics.limiterErrorsTotal.inc();
      // One line per 10 s at most: an outage must be visible without flooding the log.
      if (Date.now() - lastLimiterLog > 10_000) { lastLimiterLog = Date.now(); console.error(`limiter (redis) error: ${(e as Error).message}; fail ${cfg.storage.redisFailOpen ? 'open' : 'closed'}`); }
    },
  });
  if (keys) await limiter.seed(store, (await store.listKeys()));
  const admin = new KeyAdmin(store, async () => {
    if (keys) { await keys.refresh(); await limiter.seed(store, await store.listKeys()); }
  });
  const pools = new WorkerPools(cfg.workers.threads);
  const services: Services = {
    holder, health: new UpstreamHealth(), keys, admin, limiter: keys ? limiter : null, store,
    books: new Bookkeeper(writer, metrics),
    metrics,
    feedback: {
      lookup: (id) => writer.lookup(id),
      metrics: store,
      enqueue: (rows) => writer.enqueueFeedback(rows),
      limits: { poolMinBytes: cfg.workers.feedbackThresholdBytes },
      pool: pools.flatten ?? undefined,
    },
    convert: pools.convert,
    pools,
    draining: false,
    inFlight: 0,
  };
  holder.listeners.add((r) => {
    metrics.configReloadsTotal.inc({ result: r.ok ? (r.changed ? 'ok' : 'unchanged') : 'invalid' });
    if (!r.ok) console.error(`config reload rejected, still serving version ${holder.current.version}:\n${r.error}`);
    else if (r.changed) console.log(`config reloaded: version ${r.version}`);
  });
  // workers.*: the pools are resized when the thread count changes (the old ones finish the tasks
  // they were given, then close) and the feedback threshold follows the config; an unchanged count
  // leaves the pools alone. (workers.convert_threshold_bytes is read per request.)
  holder.listeners.add((r, next) => {
    if (!r.ok || !r.changed) return;
    const fb = services.feedback;
    if (fb && fb.limits?.poolMinBytes !== next.workers.feedbackThresholdBytes) fb.limits = { poolMinBytes: next.workers.feedbackThresholdBytes };
    const from = pools.threads;
    try {
      if (!pools.resize(next.workers.threads)) return;
    } catch (e) {
      // A listener must not throw (reload() runs it from SIGHUP and the file watcher): keep the old pools.
      console.error(`workers.threads ${next.workers.threads} not applied, still ${from}: ${(e as Error).message}`);
      return;
    }
    services.convert = pools.convert;
    if (fb) fb.pool = pools.flatten ?? undefined;
    console.log(`worker pools resized: ${from} -> ${pools.threads} threads`);
  });
  if (cfg.reload.watch) holder.watch(cfg.reload.debounceMs);

  const server = createGatewayServer(services);
  await new Promise<void>((ok, fail) => { server.once('error', fail); server.listen(cfg.server.port, cfg.server.host, () => ok()); });
  const addr = server.address();
  const url = typeof addr === 'object' && addr ? `http://${addr.address.includes(':') ? `[${addr.address}]` : addr.address}:${addr.port}` : '';

  let stopping: Promise<void> | null = null;
  const stop = (): Promise<void> => (stopping ??= (async () => {
    services.draining = true;
    holder.close();
    const closed = new Promise<void>((ok) => server.close(() => ok()));
    server.closeIdleConnections();
    const deadline = Date.now() + holder.current.server.shutdownGraceMs;
    while (services.inFlight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    server.closeAllConnections();
    await closed;
    await writer.close();
    await writes.close();
    await keys?.close();
    await limiter.close();
    await pools.close();
    await closeTransports();
    await store.close();
  })());
  return { server, services, url, stop };
}

/** `npm start`: serve until SIGTERM/SIGINT; SIGHUP reloads the config. */
export async function serve(file: string): Promise<void> {
  const gw = await startGateway(file);
  // Signal handlers go in before the "listening on" line: a supervisor (or test) that reacts to that line
  // with SIGTERM must get a drain, not the default action (immediate death).
  process.on('SIGHUP', () => { gw.services.holder.reload(); });
  const shutdown = (sig: string) => {
    console.log(`${sig}: draining (${gw.services.inFlight} in flight)`);
    gw.stop().then(() => { console.log('stopped cleanly'); process.exit(0); }, (e: unknown) => { console.error('shutdown failed:', e); process.exit(1); });
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
  console.log(`listening on ${gw.url}`);
  console.log(`config version ${gw.services.holder.current.version}: ${gw.services.holder.current.models.size} models from ${gw.services.holder.current.providers.size} providers; storage ${gw.services.store?.kind}`);
}
