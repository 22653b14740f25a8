// Keeps the PostgreSQL pool's connections honest when the network drops them without a FIN or RST (a
// firewall or NAT forgetting an idle flow, a failover whose old primary's address goes dark):
// - TCP keepalive on every connection, so the kernel probes a quiet one and fails it (ETIMEDOUT, which
//   pg-read-retry.ts counts as a lost connection) instead of the pool handing out, or a query waiting
//   on, a connection nobody answers for ever. With Node's libuv (probes every 1 s, 10 of them) a dead
//   connection is found about KEEPALIVE_IDLE_MS + 10 s after it went quiet.
// - A read not answered within READ_ABANDON_MS gives its connection up (destroyed, the pool slot freed):
//   a read sent into a silent black hole is unacknowledged data, which keepalive does not probe, and
//   the kernel gives up on it only after about 15 minutes of retransmissions, holding the slot till then.
// - When one connection is found lost under a query, the pool's idle connections that were already
//   idle before that query began are discarded: the same drop very likely took them too (a failover
//   ends every connection to the old server), and the read's one retry, or the record writer's next
//   batch, must take a fresh connection rather than the next dead one.
import type pg from 'pg';
import { abandonClient, dropSocket } from './pg-cancel.ts';
import { connectionLost } from './pg-read-retry.ts';
import { readerDeadline } from './read-deadline.ts';

/** Quiet time before the kernel's first keepalive probe. */
export const KEEPALIVE_IDLE_MS = 10_000;

/** The pg.Pool options that turn keepalive on. */
export const KEEPALIVE_OPTIONS = { keepAlive: true, keepAliveInitialDelayMillis: KEEPALIVE_IDLE_MS } as const;

/**
 * How long a plain read may go unanswered before its connection is given up. Far past every reader's
 * own patience (the request path's 5 s read deadline, the dashboard's 30 s answer timeout), so only a
 * connection nobody will ever answer on meets it.
 */
export const READ_ABANDON_MS = 120_000;


/**
 * Watches `pool`: which clients are idle and since when; on a client released with a lost-connection
 * error, ends every idle client idle since before the lost one was taken from the pool: its socket is
 * destroyed and it errors, which makes the pool drop it as it drops any idle client whose connection
 * fails. Returns the count of connections discarded so far (for tests and /metrics).
 */
export function watchPoolHealth(pool: pg.Pool): { discarded(): number } {
  // Order, not clock time: two events in one millisecond must still tell which came first.
  let tick = 0;
  const idleSince = new Map<pg.PoolClient, number>();
  const busySince = new WeakMap<pg.PoolClient, number>();
  let discarded = 0;
  pool.on('acquire', (c) => { idleSince.delete(c); busySince.set(c, ++tick); });
  pool.on('remove', (c) => { idleSince.delete(c as pg.PoolClient); });
  pool.on('release', (err: Error | undefined, c: pg.PoolClient) => {
    if (!err) { idleSince.set(c, ++tick); return; }
    idleSince.delete(c);
    if (!connectionLost(err)) return;
    // A client that answered after the lost one was taken was alive then: it stays.
    const lostAt = busySince.get(c) ?? ++tick;
    for (const [idle, since] of idleSince) {
      if (since > lostAt) continue;
      idleSince.delete(idle);
      discarded++;
      // Its socket closed, and the pool told now, not on a later tick: the pool drops an idle client
      // that errors at once (pg-pool's idle listener), so the retry that follows cannot be handed it.
      dropSocket(idle);
      if (idle.listenerCount('error') > 0) idle.emit('error', new Error('discarded: another connection of the pool was lost'));
    }
  });
  return { discarded: () => discarded };
}

/**
 * A statement run as pool.query runs it (a client taken, the statement, the client given back), except
 * that after `abandonMs` with no answer its connection is destroyed, and the server asked to cancel the
 * statement: it fails as its connection lost (ETIMEDOUT) and the pool drops the client, its slot free
 * for a fresh connection.
 * A query error gives the client back to the pool (it is still usable); a lost connection drops it.
 */
export function abandoningQuery(pool: pg.Pool, abandonMs: number): (sql: string, params: unknown[]) => Promise<pg.QueryResult> {
  // Callbacks, not pg's promises: one promise per read instead of three (measured about 10 us a read).
  return (sql, params) => new Promise((resolve, reject) => {
    // The reader's deadline (read-deadline.ts), when it runs under one: past it nobody waits for the answer.
    const gone = readerDeadline();
    if (gone?.reason) { reject(gone.reason); return; }
    pool.connect((connectErr, c, done) => {
      if (connectErr || !c) { reject(connectErr); return; }
      if (gone?.reason) { done(); reject(gone.reason); return; }
      let broken: Error | undefined;
      let abandoned: Error | undefined;
      // An error event of the client while it is out of the pool (its connection ended) must have a listener.
      const onError = (e: Error): void => { broken ??= e; };
      c.on('error', onError);
      // `lost`: the connection is taken for lost (the bound passed), which discards older idle ones too
      // (watchPoolHealth); a read its reader left is only dropped with its connection.
      const giveUp = (e: Error, lost: boolean): void => {
        if (abandoned) return;
        abandoned = e;
        broken = lost ? e : new Error('a read given up at its reader\'s deadline: its connection is dropped');
        // The server is asked to stop the statement too: a backend busy or waiting on a lock would
        // otherwise run on, its connection slot held, after the socket is gone (pg-cancel.ts).
        abandonClient(c);
      };
      const timer = setTimeout(() => giveUp(Object.assign(new Error(`the database did not answer within ${abandonMs / 1000} s: the connection is given up`), { code: 'ETIMEDOUT' }), true), abandonMs);
      // Its reader gone, the read is given up at once rather than at the bound (its pooled connection freed).
      const off = gone?.onGone(() => giveUp(gone.reason!, false));
      c.query(sql, params, (err: Error | null, res: pg.QueryResult) => {
        clearTimeout(timer);
        off?.();
        c.removeListener('error', onError);
        if (err && !abandoned && connectionLost(err)) broken ??= err;
        done(broken);
        if (abandoned) reject(abandoned);
        else if (err) reject(err);
        else resolve(res);
      });
    });
  });
}
