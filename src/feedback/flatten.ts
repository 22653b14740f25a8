// Validates one feedback event and flattens its `feedback` object into typed metric entries.
// Pure and synchronous so the same code runs inline and inside the worker pool.
import type { MetricType } from '../store/types.ts';
import { isUuid } from '../util/uuid.ts';
import { quoted } from '../gateway-error.ts';
import type { FeedbackLimits } from './limits.ts';

export type FlatEntry = { metric: string; type: MetricType; value: string; reason: string | null };
export type Optimize = 'max' | 'min';

export type FlatEvent =
  /** `optimize` null: not given (a new metric then optimizes "max"; a known one keeps its direction). */
  | { ok: true; id: string; entries: FlatEntry[]; tags: Record<string, string>; optimize: Optimize | null }
  | { ok: false; message: string };

const EVENT_FIELDS = new Set(['id', 'feedback', 'tags', 'optimize']);
// Control characters make metric names unprintable in the dashboard and in logs.
const CONTROL_RE = /[\u0000-\u001f\u007f]/;

/** Thrown inside the walk only; turned into `{ok: false}` before leaving this module. */
class EventError extends Error {}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A short, safe rendering of a bad value's type for messages. */
const typeName = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

/** A key or value the client sent, as messages quote it (the shared format: first 64 characters and the length). */
const quote = (s: string): string => quoted(s, 64);

/**
 * Validates and flattens one event. Never throws: every problem becomes a message that names
 * the field or the flattened key (`feedback.quality.accuracy`).
 */
export function flattenEvent(event: unknown, limits: FeedbackLimits): FlatEvent {
  try {
    return { ok: true, ...parseEvent(event, limits) };
  } catch (err) {
    if (err instanceof EventError) return { ok: false, message: err.message };
    throw err;
  }
}

function parseEvent(event: unknown, limits: FeedbackLimits) {
  if (!isPlainObject(event)) throw new EventError(`each feedback event must be an object; got ${typeName(event)}`);
  for (const k of Object.keys(event)) {
    if (!EVENT_FIELDS.has(k)) throw new EventError(`unknown field ${quote(k)}; an event has id, feedback, tags and optimize`);
  }
  const { id, feedback, tags, optimize } = event;
  if (id === undefined) throw new EventError('id is required (the inference id, a UUID string)');
  if (typeof id !== 'string') throw new EventError(`id must be a UUID string; got ${typeName(id)}`);
  if (!isUuid(id)) throw new EventError(`id must be a UUID string; got ${quote(id)}`);
  if (feedback === undefined) throw new EventError('feedback is required (an object of feedback values)');
  if (!isPlainObject(feedback)) throw new EventError(`feedback must be an object; got ${typeName(feedback)}`);
  const entries: FlatEntry[] = [];
  walk(feedback, '', 1, entries, limits);
  return { id: id.toLowerCase(), entries, tags: parseTags(tags, limits), optimize: parseOptimize(optimize) };
}

function walk(obj: Record<string, unknown>, prefix: string, depth: number, out: FlatEntry[], limits: FeedbackLimits): void {
  if (depth > limits.maxDepth) {
    throw new EventError(`feedback.${prefix.slice(0, -1)}: nested deeper than ${limits.maxDepth} levels`);
  }
  for (const [key, value] of Object.entries(obj)) {
    const metric = prefix + key;
    checkKey(key, metric, limits);
    if (isPlainObject(value) && !isScoreObject(value)) {
      walk(value, `${metric}.`, depth + 1, out, limits);
      continue;
    }
    if (out.length === limits.maxEntriesPerEvent) {
      throw new EventError(`feedback: more than ${limits.maxEntriesPerEvent} values in one event`);
    }
    if (isPlainObject(value)) {
      const reason = value.reason;
      if (reason !== undefined && typeof reason !== 'string') {
        throw new EventError(`feedback.${metric}.reason must be a string; got ${typeName(reason)}`);
      }
      if (reason !== undefined && reason.length > limits.maxReasonLength) {
        throw new EventError(`feedback.${metric}.reason is longer than ${limits.maxReasonLength} characters`);
      }
      out.push(scalarEntry(value.score, metric, true, reason ?? null, limits));
    } else {
      out.push(scalarEntry(value, metric, false, null, limits));
    }
  }
}

/** `{score}` or `{score, reason}` exactly; any other object is a nested group of metrics. */
function isScoreObject(v: Record<string, unknown>): boolean {
  const keys = Object.keys(v);
  if (keys.length === 1) return keys[0] === 'score';
  return keys.length === 2 && Object.hasOwn(v, 'score') && Object.hasOwn(v, 'reason');
}

// Messages are built only on failure: this runs once per key of every event.
function checkKey(key: string, metric: string, limits: FeedbackLimits): void {
  const where = () => (metric.length > key.length ? `feedback.${metric.slice(0, -key.length - 1)}` : 'feedback');
  if (key === '') throw new EventError(`${where()}: keys must not be empty`);
  // A literal dot would make `{"a.b": 1}` and `{"a": {"b": 1}}` the same metric.
  if (key.includes('.')) {
    throw new EventError(`${where()}: key ${quote(key)} contains a dot; dots join nested keys, so nest an object instead`);
  }
  if (CONTROL_RE.test(key)) throw new EventError(`${where()}: key ${quote(key)} contains control characters`);
  // The stores write a lone surrogate as U+FFFD: "\ud800" and "\udc00" would be one stored metric of two types.
  if (!key.isWellFormed()) throw new EventError(`${where()}: key ${quote(key)} is not valid Unicode (a lone surrogate)`);
  if (metric.length > limits.maxKeyLength) {
    throw new EventError(`${where()}: key ${quote(metric)} is longer than ${limits.maxKeyLength} characters once flattened`);
  }
}

/** `isScore`: `v` is the score of a {score, reason} value, which changes the messages' wording. */
function scalarEntry(v: unknown, metric: string, isScore: boolean, reason: string | null, limits: FeedbackLimits): FlatEntry {
  const where = () => (isScore ? `feedback.${metric}.score` : `feedback.${metric}`);
  switch (typeof v) {
    case 'boolean':
      return { metric, type: 'boolean', value: v ? 'true' : 'false', reason };
    case 'number':
      if (!Number.isFinite(v)) throw new EventError(`${where()}: numbers must be finite`);
      // -0 would print as "0" anyway; integers are floats from here on (5 is stored as "5").
      return { metric, type: 'float', value: String(v), reason };
    case 'string':
      if (v.length > limits.maxCommentLength) {
        throw new EventError(`${where()}: comment is longer than ${limits.maxCommentLength} characters`);
      }
      return { metric, type: 'comment', value: v, reason };
    default:
      if (isScore) throw new EventError(`${where()} must be a boolean, number or string; got ${typeName(v)}`);
      throw new EventError(`${where()}: ${typeName(v)} is not a supported feedback value (use a boolean, number, string, {score, reason} or an object)`);
  }
}

function parseTags(tags: unknown, limits: FeedbackLimits): Record<string, string> {
  if (tags === undefined) return {};
  if (!isPlainObject(tags)) throw new EventError(`tags must be an object of string values; got ${typeName(tags)}`);
  const keys = Object.keys(tags);
  if (keys.length > limits.maxTags) throw new EventError(`tags: at most ${limits.maxTags} tags per event; got ${keys.length}`);
  const out: Record<string, string> = {};
  for (const k of keys) {
    const v = tags[k];
    if (k === '') throw new EventError('tags: keys must not be empty');
    if (k.length > limits.maxTagKeyLength) throw new EventError(`tags: key ${quote(k)} is longer than ${limits.maxTagKeyLength} characters`);
    if (typeof v !== 'string') throw new EventError(`tags.${k} must be a string; got ${typeName(v)}`);
    if (v.length > limits.maxTagValueLength) throw new EventError(`tags.${k} is longer than ${limits.maxTagValueLength} characters`);
    // Plain assignment to "__proto__" would set the prototype (or be dropped): define it instead.
    if (k === '__proto__') Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
    else out[k] = v;
  }
  return out;
}

function parseOptimize(v: unknown): Optimize | null {
  if (v === undefined) return null;
  if (v === 'max' || v === 'min') return v;
  throw new EventError(`optimize must be "max" or "min"; got ${typeof v === 'string' ? quote(v) : typeName(v)}`);
}
