// What the dashboard's HTTP side needs, built once at start (src/serve.ts): accounts, sessions, the
// login limiter, keys with stats, the live tail and the hourly maintenance (retention of records and
// rollups, expired sessions, grace hashes and sign-in windows, feedback that waited for its inference).
import { storeNow } from '../store/clock.ts';
import type { ConfigHolder } from '../config/reload.ts';
import type { Store } from '../store/types.ts';
import { KeysData } from './keys-data.ts';
import { LoginLimiter } from './login-limiter.ts';
import { sweepPendingFeedback } from '../store/rollup-fold.ts';
import { pruneRollups } from '../store/rollup-retention.ts';
import { pruneOnce, type RetentionSteps } from './retention.ts';
import { catchUpTimer } from '../util/catch-up.ts';
import { Sessions } from './sessions.ts';
import { TailHub } from './tail.ts';
import { Users } from './users.ts';

export type DashboardServices = {
  users: Users; sessions: Sessions; logins: LoginLimiter; keys: KeysData; tail: TailHub; store: Store;
  /** Key names by id, refreshed with every key change and at most every 10 s otherwise (labels, tail). */
  keyName(id: string): string | null;
  refreshKeyNames(): Promise<void>;
  /**
   * Reads the names again first when one of `ids` has none (a key made since by the CLI, another replica
   * or straight in the store: its first report showed its id), at most once a second.
   */
  nameKeys(ids: Iterable<string | null>): Promise<void>;
  /** One retention pass now (the timer runs them hourly); true when it stopped at its bound with rows left. */
  retentionPass(): Promise<boolean>;
  close(): void;
};

const RETENTION_EVERY_MS = 3_600_000;
/** After a pass that stopped at its bound (a million records) with more to delete. */
const RETENTION_AGAIN_MS = 1_000;

/**
 * `onKeysChanged` reloads the key ring and re-seeds the limiter after an edit, a rotation or a
 * revocation; `retention` runs the records' retention chunks (on the store's write thread in serve.ts).
 */
export function createDashboardServices(store: Store, holder: ConfigHolder, onKeysChanged: () => Promise<void>, retention: RetentionSteps): DashboardServices {
  const cfg = () => holder.current.dashboard;
  const names = new Map<string, string>();
  let namesAt = 0;
  const refreshKeyNames = async (): Promise<void> => {
    const keys = await store.listKeys();
    names.clear();
    for (const k of keys) names.set(k.id, k.name);
    namesAt = Date.now();
  };
  const keyName = (id: string): string | null => {
    if (Date.now() - namesAt > 10_000) { namesAt = Date.now(); void refreshKeyNames().catch(() => {}); }
    return names.get(id) ?? null;
  };
  // A miss reads the names again at most once a second (an id no key has any more would otherwise read them on every call).
  let missAt = 0;
  const nameKeys = async (ids: Iterable<string | null>): Promise<void> => {
    for (const id of ids) {
      if (!id || names.has(id)) continue;
      if (Date.now() - missAt > 1000) { missAt = Date.now(); await refreshKeyNames(); }
      return;
    }
  };
  const sessions = new Sessions(store.sql, { idleMs: cfg().sessionIdleMs, absoluteMs: cfg().sessionAbsoluteMs });
  // Session limits follow reloads; the retention timer reads its settings at each pass.
  holder.listeners.add((r, next) => { if (r.ok) sessions.limits = { idleMs: next.dashboard.sessionIdleMs, absoluteMs: next.dashboard.sessionAbsoluteMs }; });
  const keys = new KeysData(store, async () => { await onKeysChanged(); await refreshKeyNames(); });
  const tail = new TailHub(keyName);
  if (store.kind === 'postgres' && cfg().tailPollMs > 0) tail.pollDatabase(store.sql, cfg().tailPollMs);
  const logins = new LoginLimiter(store.sql);
  /** One retention pass; true when it stopped at its bound with records left (the next comes soon). */
  const retentionPass = async (): Promise<boolean> => {
    const r = cfg().retention;
    try {
      // By the store's clock: a replica whose clock ran ahead deleted what every other replica's keeps.
      const now = await storeNow(store.sql);
      const { more } = await pruneOnce(retention, r, now);
      await sessions.prune();
      await keys.pruneGrace();
      await logins.prune();
      await sweepPendingFeedback(store.sql);
      await pruneRollups(store.sql, r, now);
      return more;
    } catch (e) {
      console.error('dashboard retention pass failed:', (e as Error).message);
      return false;
    }
  };
  const timer = catchUpTimer(retentionPass, { firstMs: 30_000, everyMs: RETENTION_EVERY_MS, againMs: RETENTION_AGAIN_MS });
  void refreshKeyNames().catch(() => {});
  return {
    users: new Users(store.sql), sessions, logins, keys, tail, store, keyName, refreshKeyNames, nameKeys, retentionPass,
    close: () => { timer.stop(); tail.close(); },
  };
}
