// Stored responses (`store: true` on POST /v1/responses): each answer with the input items its request
// added, scoped to the key that made it, kept for the configured retention. `previous_response_id`
// rebuilds a conversation by walking the chain in one recursive query. Queries are written once
// against store.sql (both dialects); writes go through the store's write thread and are never awaited by
// a request: a response is readable from memory until its row is committed (or, when only the writer
// holds its input items, a read waits for that one write). A write that fails is retried in the
// background (write-retries.ts) and the response stays readable from memory until it is written.
import { GatewayError } from '../gateway-error.ts';
import { withinReadDeadline } from '../store/read-deadline.ts';
import type { SqlRunner } from '../store/sql-runner.ts';
import { inputItemsOf, insertStoredResponse, type StoredResponseRow } from './rows.ts';
import { WriteRetries, type WriteRetryOptions, type WriteRetryStats } from './write-retries.ts';
import { mintedWithin } from '../util/uuid.ts';

type Rec = Record<string, unknown>;

export type StoredResponse = {
  id: string;
  /** '' when auth is off (one scope for every caller). */
  keyId: string;
  createdAt: number;
  expiresAt: number;
  previousId: string | null;
  /** The input items this request added (with ids), in order. */
  inputItems: Rec[];
  /** The response object as the client received it. */
  response: Rec;
};

/** Longest conversation rebuilt from previous_response_id links. */
export const MAX_CHAIN = 1000;
const PURGE_EVERY_MS = 3_600_000;

const CHAIN_SQL = `WITH RECURSIVE chain(id, previous_id, depth) AS (
  SELECT id, previous_id, 0 FROM stored_responses WHERE id = ? AND key_id = ? AND expires_at > ?
  UNION ALL
  SELECT r.id, r.previous_id, c.depth + 1 FROM stored_responses r JOIN chain c ON r.id = c.previous_id
  WHERE r.key_id = ? AND r.expires_at > ? AND c.depth < ${MAX_CHAIN}
)
SELECT r.id, r.previous_id, r.input_items, r.response, c.depth FROM chain c JOIN stored_responses r ON r.id = c.id ORDER BY c.depth DESC`;

const json = (v: unknown): Rec | Rec[] => JSON.parse(String(v)) as Rec | Rec[];

/**
 * Another replica's response may not be committed yet when the client names it: the replica that
 * answered does not hold the answer back for its insert, and a client behind a load balancer chains
 * its next turn (or GETs or DELETEs the response) at once, often on another replica. Before
 * 2026-11-29 half of such turns were a 400 previous_response_not_found (the row landed 10-460 ms
 * later). An id this gateway minted (UUIDv7, its time in the first 48 bits) within RECENT_MS, which a
 * response is saved within (it is minted when its request starts; upstream.total_timeout_ms defaults
 * to 10 minutes), is looked for again after each of RECHECK_MS before it is called unknown; any other
 * id is answered at once.
 */
const RECENT_MS = 15 * 60_000;
const RECHECK_MS = [25, 50, 100, 200, 400, 800];

/** `find`'s answer, asked again after each pause of RECHECK_MS while it finds nothing and `id` is recent. */
async function foundOrLate<T>(id: string, find: () => Promise<T>, none: (x: T) => boolean): Promise<T> {
  let x = await find();
  if (!none(x) || !mintedWithin(id, RECENT_MS)) return x;
  for (const ms of RECHECK_MS) {
    await new Promise((r) => setTimeout(r, ms));
    x = await find();
    if (!none(x)) break;
  }
  return x;
}

/**
 * Whether an id a client sent can name a stored row at all. PostgreSQL refuses a NUL in a text
 * parameter, which read as the database being down (a 503 to retry forever); no stored id has one.
 */
const storable = (id: string): boolean => !id.includes('\u0000');

/**
 * A read the database could not answer, or not within the read deadline (src/store/read-deadline.ts):
 * a 503 the client may retry, never a 500, a false 'not found' or a request waiting with no end. A
 * read passed as a function is also given up on the database at the deadline (its pooled connection freed).
 */
async function reading<T>(q: Promise<T> | (() => Promise<T>)): Promise<T> {
  try { return await withinReadDeadline(q); } catch (e) {
    throw new GatewayError('storage_unavailable', `the gateway's database is unavailable, so stored responses cannot be read now (${(e as Error).message}); retry later`, { headers: { 'retry-after': '1' } });
  }
}

/**
 * A row written but maybe not committed yet; `inputItems` null when only the write side will extract
 * them (a pooled body). `written` settles with its first write, either way: a failed one leaves the
 * row here, its input items extracted, while the retries run.
 */
type Pending = Omit<StoredResponse, 'inputItems'> & { inputItems: Rec[] | null; written: Promise<void> };

export type ResponseStoreOptions = { retries?: WriteRetryOptions };

const publicView = (p: Pending): StoredResponse => ({
  id: p.id, keyId: p.keyId, createdAt: p.createdAt, expiresAt: p.expiresAt, previousId: p.previousId, inputItems: p.inputItems!, response: p.response,
});

export class ResponseStore {
  readonly #sql: SqlRunner;
  /** Written but not yet committed (or whose write failed and is being reported): served from here. */
  readonly #pending = new Map<string, Pending>();
  #lastPurge = 0;
  readonly #onError: (e: unknown) => void;
  readonly #write: (row: StoredResponseRow) => Promise<void>;
  readonly #retries: WriteRetries;

  /**
   * `write` inserts a row: by default on `sql` (this thread); the gateway passes the store's write
   * thread, so serialising and inserting (synchronous with SQLite) leave the event loop. `onError` is
   * told of every failed write and of every response given up (the gateway logs them, throttled).
   */
  constructor(sql: SqlRunner, onError: (e: unknown) => void = (e) => console.error('stored responses:', (e as Error).message), write?: (row: StoredResponseRow) => Promise<void>, opts: ResponseStoreOptions = {}) {
    this.#sql = sql;
    this.#onError = onError;
    this.#write = write ?? ((row) => insertStoredResponse(sql, row));
    this.#retries = new WriteRetries(this.#write, {
      written: (id) => { this.#pending.delete(id); },
      dropped: (id, why) => { this.#pending.delete(id); this.#report(new Error(`response ${id} was not stored: ${why}`)); },
      failed: (e) => this.#report(e),
    }, opts.retries);
  }

  /** The report must not break a write's bookkeeping, whatever the handler does. */
  #report(e: unknown): void {
    try { this.#onError(e); } catch { /* reported elsewhere or not at all: the row's fate stays the same */ }
  }

  /** Rows waiting for a retried write, failed writes, responses given up (metrics). */
  retryStats(): WriteRetryStats { return this.#retries.stats(); }

  /**
   * Queues the row; the caller does not wait. With `body` (the client's request bytes) the writer
   * extracts the input items from it, and `inputItems` may be null: reads of this response then wait
   * for its write. Expired rows are purged at most once an hour, on a write.
   */
  save(r: Omit<StoredResponse, 'inputItems'> & { inputItems: Rec[] | null }, body?: Uint8Array): void {
    if (r.inputItems === null && body === undefined) throw new Error('a stored response needs its input items or its request body');
    const now = Date.now();
    // Expired rows are deleted by the same writer, after this insert (a DELETE of many rows is no
    // cheaper on the event loop than an insert).
    const purge = now - this.#lastPurge > PURGE_EVERY_MS;
    if (purge) this.#lastPurge = now;
    const row: StoredResponseRow = {
      id: r.id, keyId: r.keyId, createdAt: r.createdAt, expiresAt: r.expiresAt, previousId: r.previousId, responseJson: JSON.stringify(r.response),
      ...(body !== undefined ? { body } : { inputJson: JSON.stringify(r.inputItems) }), ...(purge ? { purgeBefore: now } : {}),
    };
    let write: Promise<void>;
    try { write = this.#write(row); } catch (e) { write = Promise.reject(e); }
    const pending: Pending = { ...r, written: write.then(() => { this.#pending.delete(r.id); }, (e: unknown) => this.#failed(pending, row, e)) };
    this.#pending.set(r.id, pending);
  }

  /**
   * A first write failed: the response stays readable from memory (its input items taken from the
   * body here when only the writer had them) and its row waits for a retry.
   */
  #failed(p: Pending, row: StoredResponseRow, e: unknown): void {
    if (p.inputItems === null) {
      try { p.inputItems = inputItemsOf(row); } catch {
        // A body no write can read (the writer failed on it too): nothing to keep or retry.
        this.#pending.delete(p.id);
        this.#report(new Error(`response ${p.id} was not stored: ${(e as Error)?.message ?? e}`));
        return;
      }
    }
    this.#retries.add(row, e);
  }

  /**
   * Shutdown: waits for the first writes, then writes what waits for a retry once more. Resolves with
   * the responses that could not be stored (lost: a later turn chaining from one gets a 404).
   */
  async close(deadlineMs = 10_000): Promise<number> {
    let timer: NodeJS.Timeout | undefined;
    // Never waits on a hung write past the deadline (as the record writer's close): what is not
    // confirmed written by then counts as lost.
    const lost = await Promise.race([
      this.settle().then(() => this.#retries.close()),
      new Promise<null>((r) => { timer = setTimeout(() => r(null), deadlineMs); }),
    ]);
    clearTimeout(timer);
    const n = lost ?? this.#pending.size;
    if (lost === null) this.#report(new Error(`${n} stored responses were not confirmed written within ${deadlineMs} ms of shutdown`));
    this.#pending.clear();
    return n;
  }

  /** Waits for the first write of every response saved so far (tests); retried ones go on in the background. */
  async settle(): Promise<void> {
    await Promise.all([...this.#pending.values()].map((p) => p.written));
  }

  async get(id: string, keyId: string): Promise<StoredResponse | null> {
    if (!storable(id)) return null;
    const now = Date.now();
    let p = this.#pending.get(id);
    if (p && (p.keyId !== keyId || p.expiresAt <= now)) return null;
    // Its input items are the writer's to extract: wait for its write, then read the committed row
    // (or, when the write failed, the row kept here with its items).
    if (p?.inputItems === null) { await reading(p.written); p = this.#pending.get(id); }
    if (p?.inputItems) return publicView(p);
    const rows = await foundOrLate(id, () => reading(() => this.#sql.all('SELECT id, key_id, created_at, expires_at, previous_id, input_items, response FROM stored_responses WHERE id = ? AND key_id = ? AND expires_at > ?', [id, keyId, now])), (r) => r.length === 0);
    const row = rows[0];
    if (!row) return null;
    return {
      id: String(row.id), keyId: String(row.key_id), createdAt: Number(row.created_at), expiresAt: Number(row.expires_at),
      previousId: row.previous_id == null ? null : String(row.previous_id), inputItems: json(row.input_items) as Rec[], response: json(row.response) as Rec,
    };
  }

  async delete(id: string, keyId: string): Promise<boolean> {
    if (!storable(id)) return false;
    const p = this.#pending.get(id);
    const row = (): Promise<number> => this.#sql.run('DELETE FROM stored_responses WHERE id = ? AND key_id = ?', [id, keyId]);
    if (!p) return (await foundOrLate(id, () => reading(row()), (n) => n === 0)) > 0;
    if (p.keyId !== keyId) return (await reading(row())) > 0;
    // Not committed yet: wait for the insert so the delete finds the row; one still waiting for a
    // retry is taken out of the queue and memory, and the database is asked too (a write that
    // failed may have committed all the same), without failing the deletion if it cannot answer.
    await reading(p.written);
    if (!(await this.#retries.cancel(id))) return (await reading(row())) > 0;
    this.#pending.delete(id);
    await row().catch(() => 0);
    return true;
  }

  /**
   * The conversation up to and including `id`: every response's input items then its output items,
   * oldest first. Throws 400 when `id` is unknown to this key, expired, or its chain is broken.
   */
  async conversation(id: string, keyId: string): Promise<Rec[]> {
    if (!storable(id)) throw notFound(id);
    const now = Date.now();
    const mem: Pending[] = [];
    let cursor: string | null = id;
    // The newest links may still be in memory; the rest of the chain comes from the database.
    while (cursor !== null && this.#pending.has(cursor)) {
      const p: Pending = this.#pending.get(cursor)!;
      if (p.keyId !== keyId || p.expiresAt <= now) throw notFound(id);
      // Input items only the writer extracts: once its write is done the link is read from the database.
      if (p.inputItems === null) { await reading(p.written); continue; }
      mem.unshift(p);
      cursor = p.previousId;
    }
    const links: Array<{ previousId: string | null; inputItems: Rec[]; response: Rec }> = [];
    if (cursor !== null) {
      const head = cursor;
      const rows = await foundOrLate(head, () => reading(() => this.#sql.all(CHAIN_SQL, [head, keyId, now, keyId, now])), (r) => r.length === 0);
      if (rows.length === 0) throw notFound(cursor === id ? id : cursor);
      // The query stops one link past the limit: a row still pointing back there is a chain too long, not a broken one.
      if (rows.length + mem.length > MAX_CHAIN) throw tooLong();
      if (rows[0]!.previous_id != null) {
        throw new GatewayError('previous_response_not_found', `an earlier response of the conversation (${String(rows[0]!.previous_id)}) has expired or was deleted`, { param: 'previous_response_id' });
      }
      for (const r of rows) links.push({ previousId: null, inputItems: json(r.input_items) as Rec[], response: json(r.response) as Rec });
    }
    for (const p of mem) links.push({ previousId: p.previousId, inputItems: p.inputItems!, response: p.response });
    if (links.length > MAX_CHAIN) throw tooLong();
    const items: Rec[] = [];
    for (const l of links) items.push(...l.inputItems, ...(Array.isArray(l.response.output) ? l.response.output as Rec[] : []));
    return items;
  }
}

const tooLong = (): GatewayError =>
  new GatewayError('invalid_parameter', `conversations are limited to ${MAX_CHAIN} chained responses`, { param: 'previous_response_id' });

const notFound = (id: string): GatewayError =>
  new GatewayError('previous_response_not_found', `Previous response with id '${id}' not found.`, { param: 'previous_response_id' });
