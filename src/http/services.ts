// Everything a request handler may use, built once at start (see src/serve.ts) and shared by all requests.
// A config reload that changes workers.threads replaces `convert` and `feedback.pool` (see WorkerPools).
import type { ConfigHolder } from '../config/reload.ts';
import type { UpstreamHealth } from '../engine/health.ts';
import type { KeyRing } from '../auth/keyring.ts';
import type { KeyAdmin } from '../auth/admin.ts';
import type { Limiter } from '../limits/limiter.ts';
import type { Store } from '../store/types.ts';
import type { Bookkeeper } from './bookkeeping.ts';
import type { GatewayMetrics } from '../metrics/gateway.ts';
import type { FeedbackService } from './feedback-route.ts';
import type { ConvertPool } from '../engine/convert-pool.ts';
import type { WorkerPools } from '../workers/pools.ts';

export type Services = {
  holder: ConfigHolder;
  health: UpstreamHealth;
  /** null when auth is disabled in config. */
  keys: KeyRing | null;
  admin: KeyAdmin | null;
  limiter: Limiter | null;
  store: Store | null;
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
  /** Set on SIGTERM: new requests get 503 while in-flight ones finish. */
  draining: boolean;
  inFlight: number;
};
