// Stored responses (`store: true` on POST /v1/responses): each answer with the input items its request
// added, scoped to the key that made it, kept for the configured retention. `previous_response_id`
// rebuilds a conversation by walking the chain in one recursive query. Queries are written once
// against store.sql (both dialects); writes are never awaited by a request: a response is readable
// from memory until its row is committed.
import { GatewayError } from '../gateway-error.ts';
import type { SqlRunner } from '../store/sql-runner.ts';

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

/** A read the database could not answer: a 503 the client may retry, never a 500 or a false 'not found'. */
async function reading<T>(q: Promise<T>): Promise<T> {
  try { return await q; } catch (e) {
    throw new GatewayError('storage_unavailable', `the gateway's database is unavailable, so stored responses cannot be read now (${(e as Error).message}); retry later`, { headers: { 'retry-after': '1' } });
  }
}

export class ResponseStore {
  readonly #sql: SqlRunner;
  /** Written but not yet committed (or whose write failed and is being reported): served from here. */
  readonly #pending = new Map<string, StoredResponse>();
  #lastPurge = 0;
  readonly #onError: (e: unknown) => void;

  constructor(sql: SqlRunner, onError: (e: unknown) => void = (e) => console.error('stored responses:', (e as Error).message)) {
    this.#sql = sql;
    this.#onError = onError;
  }

  /** Queues the row; the caller does not wait. Expired rows are purged at most once an hour, on a write. */
  save(r: StoredResponse): void {
    this.#pending.set(r.id, r);
    const params = [r.id, r.keyId, r.createdAt, r.expiresAt, r.previousId, JSON.stringify(r.inputItems), JSON.stringify(r.response)];
    this.#sql.run('INSERT INTO stored_responses (id, key_id, created_at, expires_at, previous_id, input_items, response) VALUES (?, ?, ?, ?, ?, ?, ?)', params)
      .catch(this.#onError)
      .finally(() => this.#pending.delete(r.id));
    const now = Date.now();
    if (now - this.#lastPurge > PURGE_EVERY_MS) {
      this.#lastPurge = now;
      this.#sql.run('DELETE FROM stored_responses WHERE expires_at <= ?', [now]).catch(this.#onError);
    }
  }

  /** Waits for the writes queued so far (tests, shutdown). */
  async settle(): Promise<void> {
    while (this.#pending.size > 0) await new Promise((r) => setTimeout(r, 5));
  }

  async get(id: string, keyId: string): Promise<StoredResponse | null> {
    const now = Date.now();
    const p = this.#pending.get(id);
    if (p) return p.keyId === keyId && p.expiresAt > now ? p : null;
    const rows = await reading(this.#sql.all('SELECT id, key_id, created_at, expires_at, previous_id, input_items, response FROM stored_responses WHERE id = ? AND key_id = ? AND expires_at > ?', [id, keyId, now]));
    const row = rows[0];
    if (!row) return null;
    return {
      id: String(row.id), keyId: String(row.key_id), createdAt: Number(row.created_at), expiresAt: Number(row.expires_at),
      previousId: row.previous_id == null ? null : String(row.previous_id), inputItems: json(row.input_items) as Rec[], response: json(row.response) as Rec,
    };
  }

  async delete(id: string, keyId: string): Promise<boolean> {
    const p = this.#pending.get(id);
    if (p && p.keyId === keyId) {
      // Not committed yet: wait for the insert so the delete finds the row.
      await this.settle();
    }
    return (await reading(this.#sql.run('DELETE FROM stored_responses WHERE id = ? AND key_id = ?', [id, keyId]))) > 0;
  }

  /**
   * The conversation up to and including `id`: every response's input items then its output items,
   * oldest first. Throws 400 when `id` is unknown to this key, expired, or its chain is broken.
   */
  async conversation(id: string, keyId: string): Promise<Rec[]> {
    const now = Date.now();
    const mem: StoredResponse[] = [];
    let cursor: string | null = id;
    // The newest links may still be in memory; the rest of the chain comes from the database.
    while (cursor !== null && this.#pending.has(cursor)) {
      const p: StoredResponse = this.#pending.get(cursor)!;
      if (p.keyId !== keyId || p.expiresAt <= now) throw notFound(id);
      mem.unshift(p);
      cursor = p.previousId;
    }
    const links: Array<{ previousId: string | null; inputItems: Rec[]; response: Rec }> = [];
    if (cursor !== null) {
      const rows = await reading(this.#sql.all(CHAIN_SQL, [cursor, keyId, now, keyId, now]));
      if (rows.length === 0) throw notFound(cursor === id ? id : cursor);
      if (rows[0]!.previous_id != null) {
        throw new GatewayError('previous_response_not_found', `an earlier response of the conversation (${String(rows[0]!.previous_id)}) has expired or was deleted`, { param: 'previous_response_id' });
      }
      for (const r of rows) links.push({ previousId: null, inputItems: json(r.input_items) as Rec[], response: json(r.response) as Rec });
    }
    links.push(...mem);
    if (links.length > MAX_CHAIN) throw new GatewayError('invalid_parameter', `conversations are limited to ${MAX_CHAIN} chained responses`, { param: 'previous_response_id' });
    const items: Rec[] = [];
    for (const l of links) items.push(...l.inputItems, ...(Array.isArray(l.response.output) ? l.response.output as Rec[] : []));
    return items;
  }
}

const notFound = (id: string): GatewayError =>
  new GatewayError('previous_response_not_found', `Previous response with id '${id}' not found.`, { param: 'previous_response_id' });
