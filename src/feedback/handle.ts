// POST /v1/feedback semantics: per-event validation, ownership check, metric typing and rows
// handed to the batched writer. HTTP wiring and the error envelope belong to src/http/.
import { GatewayError } from '../http/errors.ts';
import type { FeedbackRow, InferenceRef, MetricType } from '../store/types.ts';
import { uuidv7 } from '../util/uuid.ts';
import { flattenBatch, flattenBatchBytes, type BatchResult } from './batch.ts';
import type { FlatEvent } from './flatten.ts';
import { resolveLimits, type FeedbackLimits } from './limits.ts';
import { MetricTypes, type MetricTypeStore } from './metric-types.ts';
import type { FlattenPool } from './pool.ts';

export type { MetricTypeStore } from './metric-types.ts';

export type FeedbackContext = {
  /** The authenticated key; only its own inferences accept feedback. */
  keyId: string | null;
  /** Finds an inference, from memory before its record is flushed, else from the store. */
  lookup(id: string): Promise<InferenceRef | null>;
  metrics: MetricTypeStore;
  /** Queues rows to the batched writer; never awaits the database. */
  enqueue(rows: FeedbackRow[]): void;
  limits?: Partial<FeedbackLimits>;
  /** Used by handleFeedbackBytes for bodies of at least `limits.poolMinBytes`. */
  pool?: FlattenPool;
};

export type FeedbackResult =
  | { feedback_ids: Record<string, string>; error: null }
  | { feedback_ids: null; error: { status_code: 400; message: string } };

/** Parallel inference lookups per request; a 10,000-event batch must not open 10,000 queries. */
const LOOKUP_CONCURRENCY = 32;

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

  const refs = await lookupAll(events, ctx.lookup);
  const live: Array<{ i: number; ev: Extract<FlatEvent, { ok: true }> }> = [];
  events.forEach((ev, i) => {
    if (!ev.ok) return;
    const ref = refs.get(ev.id);
    // Another key's inference gets the same answer as a missing one: never reveal it exists.
    if (!ref || ref.keyId !== ctx.keyId) results[i] = fail(`Inference ID ${ev.id} does not exist`);
    else live.push({ i, ev });
  });

  const types = await MetricTypes.load(ctx.metrics, new Set(live.flatMap(({ ev }) => ev.entries.map((e) => e.metric))));
  const createdAt = new Date().toISOString();
  const rows: FeedbackRow[] = [];
  // In order, one event at a time: an earlier event of the batch fixes a new metric's type first.
  for (const { i, ev } of live) {
    let message = conflict(ev, (m) => types.get(m));
    if (message === null) {
      const fresh = ev.entries.filter((e) => types.get(e.metric) === undefined);
      if (fresh.length > 0) {
        const won = await types.claim(fresh);
        message = conflict(ev, (m) => won.get(m) ?? types.get(m));
      }
    }
    if (message !== null) { results[i] = fail(message); continue; }
    const ids: Array<[string, string]> = [];
    for (const e of ev.entries) {
      const id = uuidv7();
      ids.push([e.metric, id]);
      rows.push({
        id, inferenceId: ev.id, keyId: ctx.keyId, metric: e.metric, type: e.type, value: e.value,
        reason: e.reason, tags: ev.tags, optimize: ev.optimize, createdAt,
      });
    }
    results[i] = { feedback_ids: Object.fromEntries(ids), error: null };
  }
  // One enqueue after every check: an event's rows go in all together or not at all.
  if (rows.length > 0) ctx.enqueue(rows);
  return results as FeedbackResult[];
}

/** The first value whose type differs from its metric's fixed type, as a message; else null. */
function conflict(ev: Extract<FlatEvent, { ok: true }>, typeOf: (metric: string) => MetricType | undefined): string | null {
  for (const e of ev.entries) {
    const fixed = typeOf(e.metric);
    if (fixed !== undefined && fixed !== e.type) {
      return `feedback.${e.metric}: metric ${e.metric} is ${fixed}; got ${e.type} (a metric's type is fixed by its first value)`;
    }
  }
  return null;
}

/** Looks up each distinct inference id once, at most LOOKUP_CONCURRENCY at a time. */
async function lookupAll(events: FlatEvent[], lookup: FeedbackContext['lookup']): Promise<Map<string, InferenceRef | null>> {
  const ids = [...new Set(events.flatMap((e) => (e.ok ? [e.id] : [])))];
  const out = new Map<string, InferenceRef | null>();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < ids.length) {
      const id = ids[next++]!;
      out.set(id, await lookup(id));
    }
  };
  await Promise.all(Array.from({ length: Math.min(LOOKUP_CONCURRENCY, ids.length) }, worker));
  return out;
}
