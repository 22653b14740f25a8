// The live tail: records reach subscribers from the in-process record path at once; with PostgreSQL,
// records written by other replicas arrive through one keyset poll per process (only while someone
// watches), never one per browser. Each subscriber gets batches at most every 250 ms, bounded in size.
import type { InferenceRecord } from '../store/types.ts';
import type { SqlRunner } from '../store/sql-runner.ts';
import { str } from '../store/rows.ts';
import { idAt, toSummary } from './history.ts';
import type { TailEvent } from './ui/api-types.ts';

type Subscriber = { visible: (keyId: string | null) => boolean; buffer: TailEvent[]; dropped: number; send: (events: TailEvent[], dropped: number) => void };

const FLUSH_MS = 250;
const MAX_BUFFER = 500;
/** How far back the poll looks: other replicas flush their batches within their writer's flush_ms. */
const POLL_WINDOW_MS = 15_000;

export class TailHub {
  readonly #subs = new Set<Subscriber>();
  readonly #keyName: (id: string) => string | null;
  readonly #seen = new Map<string, number>();
  #timer: NodeJS.Timeout | null = null;
  #poll: { sql: SqlRunner; everyMs: number; timer: NodeJS.Timeout | null; running: boolean } | null = null;

  constructor(keyName: (id: string) => string | null) { this.#keyName = keyName; }

  get subscribers(): number { return this.#subs.size; }

  /** Reads other replicas' records from the database while subscribers exist (PostgreSQL with several replicas). */
  pollDatabase(sql: SqlRunner, everyMs: number): void { this.#poll = { sql, everyMs, timer: null, running: false }; }

  /** Called for every record on the request path: nothing to do without subscribers. */
  publish(rec: InferenceRecord): void {
    if (this.#subs.size === 0) return;
    if (this.#poll) this.#seen.set(rec.id, Date.now());
    const ev = summaryOfRecord(rec, this.#keyName);
    for (const s of this.#subs) this.#offer(s, ev);
  }

  #offer(s: Subscriber, ev: TailEvent): void {
    if (!s.visible(ev.key_id)) return;
    if (s.buffer.length >= MAX_BUFFER) { s.dropped++; return; }
    s.buffer.push(ev);
  }

  subscribe(visible: Subscriber['visible'], send: Subscriber['send']): () => void {
    const s: Subscriber = { visible, buffer: [], dropped: 0, send };
    this.#subs.add(s);
    this.#timer ??= setInterval(() => this.#flush(), FLUSH_MS);
    this.#timer.unref();
    if (this.#poll && this.#poll.timer === null) {
      this.#poll.timer = setInterval(() => void this.#pollOnce(), this.#poll.everyMs);
      this.#poll.timer.unref();
    }
    return () => {
      this.#subs.delete(s);
      if (this.#subs.size > 0) return;
      if (this.#timer) { clearInterval(this.#timer); this.#timer = null; }
      if (this.#poll?.timer) { clearInterval(this.#poll.timer); this.#poll.timer = null; }
      this.#seen.clear();
    };
  }

  #flush(): void {
    for (const s of this.#subs) {
      if (s.buffer.length === 0 && s.dropped === 0) continue;
      const batch = s.buffer;
      const dropped = s.dropped;
      s.buffer = [];
      s.dropped = 0;
      s.send(batch, dropped);
    }
  }

  /** One keyset read of the last POLL_WINDOW_MS of ids; ids already published (here or by an earlier poll) are skipped. */
  async #pollOnce(): Promise<void> {
    const p = this.#poll;
    if (!p || p.running || this.#subs.size === 0) return;
    p.running = true;
    try {
      const now = Date.now();
      const rows = await p.sql.all('SELECT * FROM inferences WHERE id >= ? ORDER BY id LIMIT 2000', [idAt(now - POLL_WINDOW_MS)]);
      for (const r of rows) {
        const id = str(r.id);
        if (this.#seen.has(id)) continue;
        this.#seen.set(id, now);
        const ev = toSummary(r, this.#keyName, str(r.requested_model) === 'router');
        for (const s of this.#subs) this.#offer(s, ev);
      }
      for (const [id, t] of this.#seen) if (t < now - 2 * POLL_WINDOW_MS) this.#seen.delete(id);
    } catch {
      // The next tick tries again; the in-process records keep flowing meanwhile.
    } finally {
      p.running = false;
    }
  }

  close(): void {
    if (this.#timer) clearInterval(this.#timer);
    if (this.#poll?.timer) clearInterval(this.#poll.timer);
    this.#subs.clear();
  }
}

export function summaryOfRecord(r: InferenceRecord, keyName: (id: string) => string | null): TailEvent {
  return {
    id: r.id, created_at: r.createdAt, key_id: r.keyId, key_name: r.keyId === null ? null : keyName(r.keyId), route: r.route,
    requested_model: r.requestedModel, served_model: r.servedModel, provider: r.provider, status: r.status, error_code: r.errorCode,
    stream: r.stream, latency_ms: r.latencyMs, ttft_ms: r.ttftMs, input_tokens: r.inputTokens, output_tokens: r.outputTokens,
    cost_usd: r.costUsd, attempts: r.attempts.length, partial: r.partial === true,
    // The decision is written on its own, a moment later: a router request is what asked for "router".
    routed: r.requestedModel === 'router',
  };
}
