// Piscina worker entry: parses and flattens a large feedback batch off the event loop.
// Receives the raw body as a transferred ArrayBuffer; returns the events packed in columns.
import { flattenBatchBytes, type BatchResult } from '../feedback/batch.ts';
import type { FeedbackLimits } from '../feedback/limits.ts';
import { packEvents } from '../feedback/packed.ts';
import { nameThread } from './thread-name.ts';

nameThread('gw-feedback');

export type FlattenTask = { bytes: ArrayBuffer; limits: FeedbackLimits };

/** A BatchResult whose events travel as one packed string (see packed.ts for why). */
export type FlattenTaskResult = Exclude<BatchResult, { kind: 'ok' }> | { kind: 'packed'; packed: string };

export default function flattenTask(task: FlattenTask): FlattenTaskResult {
  const r = flattenBatchBytes(new Uint8Array(task.bytes), task.limits);
  return r.kind === 'ok' ? { kind: 'packed', packed: packEvents(r.events) } : r;
}
