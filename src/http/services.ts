// Everything a request handler may use, built once at start (see src/serve.ts) and shared by all requests.
// A config reload that changes workers.threads replaces `convert` and `feedback.pool` (see WorkerPools).
import type { ConfigHolder } from '../config/reload.ts';
import type { UpstreamHealth } from '../engine/health.ts';
import type { KeyRing } from '../auth/keyring.ts';
import type { KeyAdmin } from '../auth/admin.ts';
import type { Limiter } from '../limits/limiter.ts';
import type { Store } from '../store/types.ts';
import type { StoredResponseRow } from '../responses/rows.ts';
import type { Bookkeeper } from './bookkeeping.ts';
import type { GatewayMetrics } from '../metrics/gateway.ts';
import type { FeedbackService } from './feedback-route.ts';
import type { ConvertPool } from '../engine/convert-pool.ts';
import type { WorkerPools } from '../workers/pools.ts';
import type { DashboardServices } from '../dashboard/services.ts';
import type { RouterService } from '../router/service.ts';
import type { Readiness } from '../health/readiness.ts';
import type { CatalogRefresher } from '../catalog/refresher.ts';
import type { WriterStats } from '../records/writer.ts';

export type Services = {
  holder: ConfigHolder;
  health: UpstreamHealth;
  /** null when auth is disabled in config. */
  keys: KeyRing | null;
  admin: KeyAdmin | null;
  limiter: Limiter | null;
  store: Store | null;
  /** Inserts a stored response off the event loop (the store's write thread while it lives); absent: on `store`. */
  responseWrites?: ((row: StoredResponseRow) => Promise<void>) | null;
  books: Bookkeeper;
  /** This gateway's metrics (each gateway in a process has its own registry). */
  metrics: GatewayMetrics;
  feedback: FeedbackService | null;
  /**
   * Converts inference bodies above workers.convert_threshold_bytes off the event loop; absent with workers.threads 0.
   * Read it once per use: a reload may swap it (the replaced pool finishes what it was given).
   */
  convert?: ConvertPool | null;
  /** Owns `convert` and `feedback.pool` and resizes them on reload; /health reports its size. */
  pools?: WorkerPools;
  /** Router mode (`model: "router"`, POST /v1/router/rank); absent: router mode answers 501. */
  router?: RouterService | null;
  /** The dashboard's accounts, sessions, key stats and live tail (null when dashboard.enabled is false). */
  dashboard?: DashboardServices | null;
  /** Dependency probes behind /health (last state) and /health/ready (fresh, 503 when not ready). */
  readiness?: Readiness;
  /** Catalog refresh overlay and periodic refresh (src/catalog/refresher.ts); /health shows its state. */
  catalog?: CatalogRefresher;
  /** The record writer's counters, for /health. */
  writerStats?: () => WriterStats;
  /** Set on SIGTERM: new requests get 503 while in-flight ones finish. */
  draining: boolean;
  inFlight: number;
};
