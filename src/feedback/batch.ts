// Turns a whole feedback request body (parsed, or raw bytes) into per-event flatten results.
// The one code path shared by the inline handler and the worker, so both give identical results.
import { flattenEvent, type FlatEvent } from './flatten.ts';
import type { FeedbackLimits } from './limits.ts';

/** Plain data only: it crosses the worker boundary by structured clone. */
export type BatchResult =
  | { kind: 'ok'; events: FlatEvent[] }
  | { kind: 'invalid_json'; message: string }
  | { kind: 'not_array'; got: string }
  | { kind: 'too_many'; count: number; max: number };

const decoder = new TextDecoder('utf-8', { fatal: true });

/** Validates the request shape, then flattens every event in order. */
export function flattenBatch(body: unknown, limits: FeedbackLimits): BatchResult {
  if (!Array.isArray(body)) return { kind: 'not_array', got: body === null ? 'null' : typeof body };
  if (body.length > limits.maxEventsPerRequest) {
    return { kind: 'too_many', count: body.length, max: limits.maxEventsPerRequest };
  }
  const events: FlatEvent[] = new Array(body.length);
  for (let i = 0; i < body.length; i++) events[i] = flattenEvent(body[i], limits);
  return { kind: 'ok', events };
}

/** Decodes (strict UTF-8) and parses raw body bytes, then flattens them. */
export function flattenBatchBytes(bytes: Uint8Array, limits: FeedbackLimits): BatchResult {
  let body: unknown;
  try {
    body = JSON.parse(decoder.decode(bytes));
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    return { kind: 'invalid_json', message: `request body is not valid JSON: ${why}` };
  }
  return flattenBatch(body, limits);
}
