// POST /v1/feedback semantics: per-event validation, ownership check, metric typing and rows
// handed to the batched writer. HTTP wiring and the error envelope belong to src/http/.
import { GatewayError } from '../gateway-error.ts';
import type { FeedbackRow, InferenceRef } from '../store/types.ts';
import { feedbackBytes, type QueueRoom } from '../records/queue.ts';
import { mintedWithin, uuidv7 } from '../util/uuid.ts';
import { flattenBatch, flattenBatchBytes, type BatchResult } from './batch.ts';
import type { FlatEvent } from './flatten.ts';
import { resolveLimits, type FeedbackLimits } from './limits.ts';
import type { MetricDef } from './metric-store.ts';
import { MetricTypes, type MetricTypeStore } from './metric-types.ts';
import type { FlattenPool } from './pool.ts';

export type { MetricTypeStore } from './metric-types.ts';

export type FeedbackContext = {
  /** The authenticated key; only its own inferences accept feedback. */
  keyId: string | null;
  /** Finds an inference, from memory before its record is flushed, else from the store; rejects when the store cannot answer. */
  lookup(id: string): Promise<InferenceRef | null>;
  metrics: MetricTypeStore;
  /** Queues rows to the batched writer; never awaits the database. */
  enqueue(rows: FeedbackRow[]): void;
  /**
   * What `enqueue` takes now without dropping queued rows, in rows and in estimated bytes (the write
   * queue's two bounds; absent: no bound); an event past either answers 503.
   */
  room?(): QueueRoom;
  limits?: Partial<FeedbackLimits>;
  /**
   * How long an inference minted moments ago that is found nowhere is looked for again (absent: not
   * at all): another replica answered it and its writer has not flushed the record yet.
   */
  lateWithinMs?(): number;
  /** Used by handleFeedbackBytes for bodies of at least `limits.poolMinBytes`. */
  pool?: FlattenPool;
};

export type FeedbackResult =
  | { feedback_ids: Record<string, string>; error: null }
  | { feedback_ids: null; error: { status_code: 400 | 503; message: string } };

/** Parallel inference lookups per request; a 10,000-event batch must not open 10,000 queries. */
const LOOKUP_CONCURRENCY = 32;
const NO_BOUND: QueueRoom = { rows: Infinity, bytes: Infinity };

/**
 * Handles an already parsed body. Throws GatewayError (400) when the body is not an array or
 * holds too many events; otherwise resolves one result per event, in order.
 */
export async function handleFeedback(body: unknown, ctx: FeedbackContext): Promise<FeedbackResult[]> {
  return settle(flattenBatch(body, resolveLimits(ctx.limits)), ctx);
}

/**
 * Handles the raw body: parsed and flattened in the worker pool when it is large and a pool is
 * given (the bytes may be transferred: do not reuse them), inline otherwise. Same results.
 */
export async function handleFeedbackBytes(bytes: Uint8Array, ctx: FeedbackContext): Promise<FeedbackResult[]> {
  const limits = resolveLimits(ctx.limits);
  const batch = ctx.pool && bytes.byteLength >= limits.poolMinBytes
    ? await ctx.pool.run(bytes, limits)
    : flattenBatchBytes(bytes, limits);
  return settle(batch, ctx);
}

const fail = (message: string): FeedbackResult => ({ feedback_ids: null, error: { status_code: 400, message } });
/** The store could not answer for this event: retry it later (never reported as "does not exist"). */
const unavailable = (message: string): FeedbackResult => ({ feedback_ids: null, error: { status_code: 503, message } });
const STORE_DOWN = 'the gateway\'s database is unavailable, so this event was not stored; retry it later';
const QUEUE_FULL = 'the gateway\'s write queue is full (the database is behind or unavailable), so this event was not stored; retry it later';

async function settle(batch: BatchResult, ctx: FeedbackContext): Promise<FeedbackResult[]> {
  if (batch.kind === 'invalid_json') throw new GatewayError('invalid_json', batch.message);
  if (batch.kind === 'not_array') {
    throw new GatewayError('invalid_body', `the feedback body must be a JSON array of events; got ${batch.got}`);
  }
  if (batch.kind === 'too_many') {
    throw new GatewayError('invalid_body', `at most ${batch.max} feedback events per request; got ${batch.count}`);
  }
  const events = batch.events;
  const results: Array<FeedbackResult | null> = events.map((e) => (e.ok ? null : fail(e.message)));

  const refs = await lookupAll([...new Set(events.flatMap((e) => (e.ok ? [e.id] : [])))], ctx.lookup);
  await lookAgain(refs, ctx);
  const live: Array<{ i: number; ev: Extract<FlatEvent, { ok: true }> }> = [];
  events.forEach((ev, i) => {
    if (!ev.ok) return;
    const ref = refs.get(ev.id);
    if (ref === UNAVAILABLE) results[i] = unavailable(`inference ${ev.id} could not be checked: ${STORE_DOWN}`);
    // Another key's inference gets the same answer as a missing one: never reveal it exists.
    else if (!ref || ref.keyId !== ctx.keyId) results[i] = fail(`Inference ID ${ev.id} does not exist`);
    else live.push({ i, ev });
  });

  // Metric definitions are per key: one tenant's first value neither fixes nor reveals another's metrics.
  const scope = ctx.keyId ?? '';
  let types: MetricTypes;
  try {
    types = await MetricTypes.load(ctx.metrics, scope, new Set(live.flatMap(({ ev }) => ev.entries.map((e) => e.metric))));
  } catch {
    for (const { i } of live) results[i] = unavailable(STORE_DOWN);
    return results as FeedbackResult[];
  }
  const createdAt = new Date().toISOString();
  const rows: FeedbackRow[] = [];
  // Per accepted event, where its rows end in `rows`: the queue's room is applied after the awaits below.
  const accepted: Array<{ i: number; end: number; bytes: number; ids: Record<string, string> }> = [];
  const early = ctx.room?.() ?? NO_BOUND;
  let earlyBytes = 0;
  // In order, one event at a time: an earlier event of the batch fixes a new metric first.
  for (const { i, ev } of live) {
    // Before any claim, so that (unless other requests fill the queue meanwhile) an event it cannot take fixes no metric.
    const evBytes = ev.entries.reduce((n, e) => n + feedbackBytes({ metric: e.metric, value: e.value, reason: e.reason, tags: ev.tags }), 0);
    if (rows.length + ev.entries.length > early.rows || earlyBytes + evBytes > early.bytes) { results[i] = unavailable(QUEUE_FULL); continue; }
    let message = conflict(ev, (m) => types.get(m));
    if (message === null) {
      const fresh = ev.entries.filter((e) => types.get(e.metric) === undefined);
      if (fresh.length > 0) {
        try {
          const won = await types.claim(fresh.map((e) => ({ metric: e.metric, type: e.type, optimize: e.type === 'comment' ? null : ev.optimize ?? 'max' })));
          message = conflict(ev, (m) => won.get(m) ?? types.get(m));
        } catch {
          results[i] = unavailable(STORE_DOWN);
          continue;
        }
      }
    }
    if (message !== null) { results[i] = fail(message); continue; }
    const ids: Array<[string, string]> = [];
    for (const e of ev.entries) {
      const id = uuidv7();
      ids.push([e.metric, id]);
      rows.push({
        id, inferenceId: ev.id, keyId: ctx.keyId, metric: e.metric, type: e.type, value: e.value,
        reason: e.reason, tags: ev.tags, optimize: ev.optimize ?? types.get(e.metric)?.optimize ?? 'max', createdAt,
      });
    }
    earlyBytes += evBytes;
    accepted.push({ i, end: rows.length, bytes: evBytes, ids: Object.fromEntries(ids) });
  }
  // From here to the enqueue nothing yields: the room read now is the room the rows get, so every
  // event answered with ids is queued, none dropped by the bound (the queue drops its oldest rows).
  const now = ctx.room?.() ?? NO_BOUND;
  let left = now.rows;
  let leftBytes = now.bytes;
  const kept: FeedbackRow[] = [];
  let start = 0;
  for (const a of accepted) {
    const n = a.end - start;
    if (n > left || a.bytes > leftBytes) results[a.i] = unavailable(QUEUE_FULL);
    else {
      for (let k = start; k < a.end; k++) kept.push(rows[k]!);
      left -= n;
      leftBytes -= a.bytes;
      results[a.i] = { feedback_ids: a.ids, error: null };
    }
    start = a.end;
  }
  // One enqueue after every check: an event's rows go in all together or not at all.
  if (kept.length > 0) ctx.enqueue(kept);
  return results as FeedbackResult[];
}

/** The first value whose type or direction differs from its metric's fixed definition, as a message; else null. */
function conflict(ev: Extract<FlatEvent, { ok: true }>, defOf: (metric: string) => MetricDef | undefined): string | null {
  for (const e of ev.entries) {
    const fixed = defOf(e.metric);
    if (fixed === undefined) continue;
    if (fixed.type !== e.type) {
      return `feedback.${e.metric}: metric ${e.metric} is ${fixed.type}; got ${e.type} (a metric's type is fixed by its first value)`;
    }
    if (e.type !== 'comment' && ev.optimize !== null && fixed.optimize !== null && fixed.optimize !== ev.optimize) {
      return `feedback.${e.metric}: metric ${e.metric} is optimized "${fixed.optimize}"; got optimize "${ev.optimize}" (a metric's direction is fixed by its first value; send "${fixed.optimize}" or leave optimize out)`;
    }
  }
  return null;
}

const UNAVAILABLE = Symbol('unavailable');

/** Inference ids minted within this long may name a record another replica is still writing (its request may have run up to upstream.total_timeout_ms, 10 minutes by default). */
const RECENT_MS = 15 * 60_000;

/**
 * Feedback sent to another replica than the one that answered, at once (a load balancer's round
 * robin), names a record that replica's writer flushes within storage.writer.flush_ms: before
 * 2026-11-29, 19 of 20 such events were answered 'does not exist' and never stored. The ids not found
 * that were minted recently are looked up again, all together, after pauses doubling from 50 ms
 * until `lateWithinMs` has passed; one found is taken, a lookup that fails is UNAVAILABLE (a 503, not
 * 'does not exist'), and what is still unknown then does not exist.
 */
async function lookAgain(refs: Map<string, InferenceRef | null | typeof UNAVAILABLE>, ctx: FeedbackContext): Promise<void> {
  const within = ctx.lateWithinMs?.() ?? 0;
  const now = Date.now();
  // Another key's inference waits as an unknown one does: the time taken must not tell that it exists.
  const notOurs = (r: InferenceRef | null | typeof UNAVAILABLE | undefined): boolean => r === null || (r !== UNAVAILABLE && r !== undefined && r.keyId !== ctx.keyId);
  let missing = within > 0 ? [...refs].flatMap(([id, r]) => (notOurs(r) && mintedWithin(id, RECENT_MS, now) ? [id] : [])) : [];
  for (let waited = 0, ms = 50; missing.length > 0 && waited < within; ms *= 2) {
    const pause = Math.min(ms, within - waited);
    await new Promise((r) => setTimeout(r, pause));
    waited += pause;
    const again = await lookupAll(missing, ctx.lookup);
    for (const [id, r] of again) if (!notOurs(r)) refs.set(id, r);
    missing = missing.filter((id) => notOurs(again.get(id)));
  }
}

/** Looks up each id once, at most LOOKUP_CONCURRENCY at a time; a failed lookup is UNAVAILABLE. */
async function lookupAll(ids: string[], lookup: FeedbackContext['lookup']): Promise<Map<string, InferenceRef | null | typeof UNAVAILABLE>> {
  const out = new Map<string, InferenceRef | null | typeof UNAVAILABLE>();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < ids.length) {
      const id = ids[next++]!;
      out.set(id, await lookup(id).catch(() => UNAVAILABLE));
    }
  };
  await Promise.all(Array.from({ length: Math.min(LOOKUP_CONCURRENCY, ids.length) }, worker));
  return out;
}
