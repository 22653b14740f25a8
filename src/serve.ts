// Starts the gateway: config (with hot reload and SIGHUP), storage, keys, limits, the record writer,
// metrics and the HTTP server; SIGTERM drains in-flight requests and flushes records before exit.
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Server } from 'node:http';
import { ConfigHolder } from './config/reload.ts';
import { applyServerSettings } from './config/live-settings.ts';
import { unsetVariableLines } from './config/env-warnings.ts';
import type { Config } from './config/types.ts';
import { UpstreamHealth } from './engine/health.ts';
import { closeTransports, retainTransports } from './engine/transport.ts';
import { warmUpstreams } from './engine/upstream.ts';
import { openStore, type OpenStoreOptions } from './store/open.ts';
import { StoreOpenError, describeStore } from './store/open-error.ts';
import { OperatorError } from './util/operator-error.ts';
import { WriteThread, withWriteThread } from './store/write-thread.ts';
import { withinReadDeadline } from './store/read-deadline.ts';
import { insertStoredResponse } from './responses/rows.ts';
import type { Store } from './store/types.ts';
import { KeyRing } from './auth/keyring.ts';
import { KeyAdmin } from './auth/admin.ts';
import { openLimiter } from './limits/open.ts';
import { RecordWriter } from './records/writer.ts';
import { claimMetricDefs, loadMetricDefs } from './feedback/metric-store.ts';
import { createGatewayMetrics } from './metrics/gateway.ts';
import { Readiness } from './health/readiness.ts';
import { WorkerPools } from './workers/pools.ts';
import { Bookkeeper } from './http/bookkeeping.ts';
import { createGatewayServer } from './http/server.ts';
import { closeResponseStore } from './http/responses-route.ts';
import { CatalogRefresher } from './catalog/refresher.ts';
import type { Services } from './http/services.ts';
import { describeOrigin } from './router/state-restore.ts';
import { RouterService } from './router/service.ts';
import { defaultsWarning } from './router/defaults-check.ts';
import { HealthShare } from './router/health-share.ts';
import { createDashboardServices } from './dashboard/services.ts';
import { sqlSteps, type RetentionSteps } from './dashboard/retention.ts';
import { loadGraceHashes } from './dashboard/keys-data.ts';
import { throttledLog } from './util/throttled-log.ts';

/** GATEWAY_PG_SCHEMA (env) picks the PostgreSQL schema (default "public"), e.g. one per tenant or test run. */
export function storeOptionsFor(cfg: Config, env: NodeJS.ProcessEnv = process.env): OpenStoreOptions {
  const sqlitePath = resolve(cfg.storage.sqlitePath);
  return {
    sqlitePath,
    ...(cfg.storage.databaseUrl ? { databaseUrl: cfg.storage.databaseUrl } : {}),
    ...(cfg.storage.databaseUrl && env.GATEWAY_PG_SCHEMA ? { pgSchema: env.GATEWAY_PG_SCHEMA } : {}),
  };
}

/** The configured store, migrated; a store that cannot be opened (a directory, a server down) is a StoreOpenError naming it. */
export async function openStoreFor(cfg: Config, env: NodeJS.ProcessEnv = process.env): Promise<Store> {
  const opts = storeOptionsFor(cfg, env);
  try {
    if (!opts.databaseUrl) mkdirSync(dirname(opts.sqlitePath), { recursive: true });
    return await openStore(opts);
  } catch (e) {
    throw new StoreOpenError(describeStore(opts), e);
  }
}

/** What a stop could not save: rows lost since start (queue bound, refused, or left unwritten at shutdown). */
/** `responsesLost`: stored responses (POST /v1/responses with store) the database had not taken at shutdown. */
export type StopReport = { dropped: number; droppedAtShutdown: number; responsesLost: number };
export type RunningGateway = { server: Server; services: Services; url: string; stop(): Promise<StopReport> };

/**
 * How long the shutdown's last steps (the rate limiter, the router's last decisions and its thread, the
 * write thread, the database pool) may take together: each may wait on a database that stopped
 * answering (a partition, a lock), and the pool's end waits for every query in flight, with no end.
 */
const CLOSE_REST_MS = 10_000;

/** Waits for `step` until `deadline` (ms since epoch) at most; past it the shutdown goes on, saying what it left. */
async function closing(what: string, step: Promise<unknown> | undefined, deadline: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((r) => { timer = setTimeout(() => r('late'), Math.max(0, deadline - Date.now())); });
  try {
    if ((await Promise.race([step, late])) === 'late') console.error(`shutdown: ${what} did not close in time (the database did not answer); going on without it`);
  } finally { clearTimeout(timer); }
}

/** Builds every service and listens; resolves once the port is bound. */
export async function startGateway(file: string, env: NodeJS.ProcessEnv = process.env): Promise<RunningGateway> {
  const holder = new ConfigHolder(file, env);
  // Each ${VAR} without default that is not set, once per variable, at start and on every reload (as `check` says them).
  for (const line of unsetVariableLines(holder.unsetVariables)) console.error(line);
  // Background failures (writers, pollers, Redis) log once and then once per 10 s per subject.
  const logError = throttledLog();
  const cfg = holder.current;
  const store = await openStoreFor(cfg, env);
  // Migrations ran above; the write thread opens its own connection to the same database.
  const writes = new WriteThread(storeOptionsFor(cfg, env));
  await writes.ready();
  const metrics = createGatewayMetrics();
  // Writes (records, feedback, last-used times, metric definitions) go through the write thread; reads stay here.
  const writeStore = withWriteThread(store, writes);
  const writer = new RecordWriter({
    store: writeStore, batchSize: cfg.storage.writer.batchSize, flushMs: cfg.storage.writer.flushMs, maxQueue: cfg.storage.writer.maxQueue,
    maxQueueBytes: cfg.storage.writer.maxQueueBytes,
    onError: (e) => logError('record writer', (e as Error).message),
  });
  metrics.attachWriter(() => writer.stats());
  metrics.attachStore(store);
  const limiterPrefix = `${env.GATEWAY_REDIS_PREFIX ?? 'gw:'}lim:`;
  const limiter = openLimiter({
    ...(cfg.storage.redisUrl ? { redisUrl: cfg.storage.redisUrl } : {}),
    // Under the deployment's prefix like everything else it keeps in Redis (gw:lim: by default).
    prefix: limiterPrefix,
    failOpen: cfg.storage.redisFailOpen,
    onError: (e) => {
      metrics.limiterErrorsTotal.inc();
      logError('limiter (redis) error', `${(e as Error).message}; fail ${holder.current.storage.redisFailOpen ? 'open' : 'closed'}`);
    },
    onBreakerChange: (state) => {
      for (const s of ['closed', 'open', 'half-open'] as const) metrics.limiterBreakerState.set({ state: s }, s === state ? 1 : 0);
      if (state === 'open') metrics.limiterBreakerOpenedTotal.inc();
    },
    // A budget counter or minute window Redis lost is re-seeded with this process's records not yet
    // written, after about two flush intervals (every replica's records from before the loss are in the store by then).
    unwritten: (keyId, since, until) => writer.unwrittenRecords(keyId, since, until),
    reseedDelayMs: () => 2 * holder.current.storage.writer.flushMs + 100,
  });
  if (cfg.storage.redisUrl) for (const s of ['closed', 'open', 'half-open'] as const) metrics.limiterBreakerState.set({ state: s }, s === 'closed' ? 1 : 0);
  /** The key ring, loaded, with budgets seeded from the store: at start, or when a reload turns auth on. */
  const startKeyRing = async (refreshMs: number): Promise<KeyRing> => {
    const ring = new KeyRing(writeStore, {
      refreshMs, onError: (what, e) => logError(`key ring ${what} failed`, (e as Error).message),
      graceHashes: () => loadGraceHashes(store.sql), // a rotated key's previous secret, during its grace period
      // Every key at the first load, then those whose budget is new or changed, by any writer (admin API, CLI).
      onBudgets: (changed) => limiter.seed(store, changed),
    });
    await ring.start();
    return ring;
  };
  const keys = cfg.auth.enabled ? await startKeyRing(cfg.auth.keyRefreshMs) : null;
  const keysChanged = async (): Promise<void> => { await services.keys?.refresh(); };
  const admin = new KeyAdmin(store, keysChanged);
  // The dashboard's live tail sees every record as it is queued (dashboard.enabled needs a restart).
  const mainSteps = sqlSteps(store.sql);
  const retention: RetentionSteps = {
    records: (bound) => (writes.alive ? writes.pruneRecords(bound) : mainSteps.records(bound)),
    bodies: (bound) => (writes.alive ? writes.clearBodies(bound) : mainSteps.bodies(bound)),
  };
  const dashboard = cfg.dashboard.enabled ? createDashboardServices(store, holder, keysChanged, retention) : null;
  const pools = new WorkerPools(cfg.workers.threads);
  const services: Services = {
    holder, health: new UpstreamHealth(), keys, admin, limiter: keys ? limiter : null, store,
    responseWrites: (row) => (writes.alive ? writes.insertStoredResponse(row) : insertStoredResponse(store.sql, row)),
    books: new Bookkeeper(dashboard ? { enqueue: (r) => { writer.enqueue(r); dashboard.tail.publish(r); } } : writer, metrics),
    metrics,
    feedback: {
      // Each read bounded (src/store/read-deadline.ts): a database that stops answering is a 503 per event, not a request left waiting.
      lookup: (id) => withinReadDeadline(() => writer.lookup(id)),
      // Another replica's record lands within its flush period (the same setting, as for the limiter's re-seed), plus its
      // write; at most 3 s, so a long flush period (a batch-minded operator's 60 s) does not hold every unknown id that long.
      lateWithinMs: () => Math.min(2 * holder.current.storage.writer.flushMs + 500, 3000),
      metrics: {
        load: (scope, names) => withinReadDeadline(() => loadMetricDefs(store.sql, scope, names)),
        claim: (scope, wanted) => withinReadDeadline(writes.alive ? writes.claimMetrics(scope, wanted) : claimMetricDefs(store.sql, scope, wanted)),
      },
      enqueue: (rows) => writer.enqueueFeedback(rows),
      room: () => writer.feedbackRoom(),
      limits: { poolMinBytes: cfg.workers.feedbackThresholdBytes },
      pool: pools.flatten ?? undefined,
    },
    convert: pools.convert,
    pools,
    dashboard,
    draining: false,
    inFlight: 0,
    writerStats: () => writer.stats(),
  };
  const readiness = new Readiness({
    ping: () => store.ping(), redisUrl: cfg.storage.redisUrl, redisFailOpen: () => holder.current.storage.redisFailOpen, redisProbeKey: `${limiterPrefix}ready`,
    writer: () => writer.stats(), draining: () => services.draining, authReady: () => !holder.current.auth.enabled || services.keys !== null,
    onReport: (r) => {
      metrics.ready.set(undefined, r.ready ? 1 : 0);
      for (const [k, c] of Object.entries(r.checks)) metrics.dependencyUp.set({ dependency: k }, c.ok ? 1 : 0);
    },
  });
  readiness.start();
  services.readiness = readiness;
  holder.listeners.add((r) => {
    metrics.configReloadsTotal.inc({ result: r.ok ? (r.changed ? 'ok' : 'unchanged') : 'invalid' });
    if (r.ok) for (const line of unsetVariableLines(r.unsetVariables)) console.error(line);
    if (!r.ok) console.error(`config reload rejected, still serving version ${holder.current.version}:\n${r.error}`);
    else if (r.changed) {
      const live = r.settings.filter((k) => !r.restartRequired.includes(k));
      console.log(`config reloaded: version ${r.version}${live.length ? `; applied: ${live.join(', ')}` : ''}`);
    }
    // Never silent: a restart-only setting that differs from the running value is named on every reload until it matches.
    if (r.ok && r.restartRequired.length) console.error(`config: restart required for ${r.restartRequired.join(', ')} (still running with the values from start)`);
  });
  // server.*, storage.writer.*, auth.*, reload.*: applied to the running services (see src/config/live-settings.ts).
  let authStarting = false;
  holder.listeners.add((r, next) => {
    if (!r.ok || !r.changed) return;
    applyServerSettings(server, next.server);
    writer.configure(next.storage.writer);
    limiter.configure?.({ failOpen: next.storage.redisFailOpen });
    services.keys?.setRefreshMs(next.auth.keyRefreshMs);
    holder.setWatch(next.reload.watch, next.reload.debounceMs);
    // auth.enabled turned on: requests get 503 not_ready (never open) until the key ring has loaded.
    if (next.auth.enabled && !services.keys && !authStarting) {
      authStarting = true;
      const attempt = (): void => {
        startKeyRing(holder.current.auth.keyRefreshMs).then((ring) => {
          services.keys = ring; services.limiter = limiter; authStarting = false;
          console.log(`auth enabled: ${ring.size} keys loaded`);
        }, (e: unknown) => { logError('auth enabled, key ring not loaded yet (retrying in 2 s)', (e as Error).message); setTimeout(attempt, 2000).unref(); });
      };
      attempt();
    }
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
  // Upstream connection pools: an origin no provider uses any more is closed once its requests finish
  // (pools whose connection settings changed are rebuilt on their next request, src/engine/transport.ts).
  holder.listeners.add((r, next) => {
    if (!r.ok || !r.changed) return;
    retainTransports(new Set([...next.providers.values()].map((p) => p.origin)));
    // Signing credentials (AWS chain) fetched again in the background: a reload may follow rotated keys.
    warmUpstreams(next.providers.values());
  });
  // Loaded at start in the background, so the first request seldom waits for them (src/engine/upstream.ts).
  warmUpstreams(cfg.providers.values());
  holder.setWatch(cfg.reload.watch, cfg.reload.debounceMs);

  // Router mode: decisions recorded and the learned state shared through the store; settings follow reloads.
  const router = new RouterService({
    sql: store.sql, storeOptions: storeOptionsFor(cfg, env), settings: () => holder.current.router, isEjected: (p) => services.health.isEjected(p),
    useWorker: holder.current.workers.threads > 0,
    ...(cfg.storage.redisUrl ? { redis: { url: cfg.storage.redisUrl, prefix: env.GATEWAY_REDIS_PREFIX ?? 'gw:' } } : {}),
    onError: (what, e) => logError(`router ${what}`, (e as Error).message),
    onRestored: (s) => console.log(`router: routing with learned state v${s.version}, ${describeOrigin(s.origin)}`),
    metrics,
  });
  await router.start();
  services.router = router;
  // A default model list naming what nothing routes is named at start and on every reload (catalog refreshes included).
  const warnDefaults = (c: Config): void => { const w = defaultsWarning(c); if (w !== null) console.error(w); };
  warnDefaults(cfg);
  holder.listeners.add((r, next) => { if (r.ok && r.changed) { router.reconfigure(next.router); warnDefaults(next); } });
  // With Redis, provider ejections are shared by every replica (GATEWAY_REDIS_PREFIX separates deployments).
  const share = cfg.storage.redisUrl ? new HealthShare(cfg.storage.redisUrl, services.health, {
    prefix: env.GATEWAY_REDIS_PREFIX ?? 'gw:',
    onError: (e) => logError('ejection sharing (redis)', (e as Error).message),
  }) : null;
  await share?.start(() => holder.current.providers.keys());

  // The catalog overlay stored by a refresh (this replica's or another's) is applied before serving.
  const catalog = new CatalogRefresher(holder, store.sql, { file, env, registry: metrics.registry });
  await catalog.start();
  services.catalog = catalog;

  const server = createGatewayServer(services);
  await new Promise<void>((ok, fail) => {
    // EADDRINUSE and EACCES are the operator's to fix: said in one line naming the settings, not a stack trace.
    server.once('error', (e) => fail(new OperatorError(`cannot listen on ${cfg.server.host}:${cfg.server.port} (server.host and server.port, or HOST and PORT): ${e.message}`, e)));
    server.listen(cfg.server.port, cfg.server.host, () => ok());
  });
  const addr = server.address();
  const url = typeof addr === 'object' && addr ? `http://${addr.address.includes(':') ? `[${addr.address}]` : addr.address}:${addr.port}` : '';

  let stopping: Promise<StopReport> | null = null;
  const stop = (): Promise<StopReport> => (stopping ??= (async () => {
    services.draining = true;
    holder.close();
    readiness.close();
    await catalog.close();
    const closed = new Promise<void>((ok) => server.close(() => ok()));
    server.closeIdleConnections();
    const deadline = Date.now() + holder.current.server.shutdownGraceMs;
    while (services.inFlight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    server.closeAllConnections();
    await closed;
    // Last-used times first: they go through the write thread, which closes after the writer.
    await services.keys?.close().catch((e: unknown) => console.error('key ring: last-used times not written:', (e as Error).message));
    const flushed = await writer.close();
    const responsesLost = await closeResponseStore(services);
    const rest = Date.now() + CLOSE_REST_MS;
    await closing('the rate limiter', limiter.close(), rest);
    await closing('the router (its last decisions)', router.close(), rest);
    await closing('the health share', share?.close(), rest);
    dashboard?.close();
    await pools.close();
    await closeTransports();
    await closing('the write thread', writes.close(), rest);
    await closing('the database pool', store.close(), rest);
    return { dropped: writer.stats().dropped, droppedAtShutdown: flushed.dropped, responsesLost };
  })());
  return { server, services, url, stop };
}

/** `npm start`: serve until SIGTERM/SIGINT; SIGHUP reloads the config. */
export async function serve(file: string): Promise<void> {
  const gw = await startGateway(file);
  // Signal handlers go in before the "listening on" line: a supervisor (or test) that reacts to that line
  // with SIGTERM must get a drain, not the default action (immediate death).
  process.on('SIGHUP', () => { void gw.services.holder.reload(); });
  const shutdown = (sig: string) => {
    console.log(`${sig}: draining (${gw.services.inFlight} in flight)`);
    gw.stop().then((r) => {
      // Only a shutdown that lost nothing is clean: rows that could not be written are said so, and the exit status says it too.
      if (r.dropped === 0 && r.responsesLost === 0) { console.log('stopped cleanly'); process.exit(0); }
      if (r.dropped > 0) console.error(`stopped with data loss: ${r.dropped} record/feedback rows were dropped since start (${r.droppedAtShutdown} still unwritten at shutdown: the database did not take them in time)`);
      if (r.responsesLost > 0) console.error(`stopped with data loss: ${r.responsesLost} stored responses were still waiting for the database (a turn chaining from one gets a 404)`);
      process.exit(1);
    }, (e: unknown) => { console.error('shutdown failed:', e); process.exit(1); });
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
  console.log(`listening on ${gw.url}`);
  console.log(`config version ${gw.services.holder.current.version}: ${gw.services.holder.current.models.size} models from ${gw.services.holder.current.providers.size} providers; storage ${gw.services.store?.kind}`);
}
