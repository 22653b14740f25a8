// How an inference record crosses to the write thread: a positional tuple instead of an object.
// Structured clone writes every property name of every object; tuples skip 26 keys per record and cut
// the main thread's postMessage cost by about a third (a JSON string was no cheaper than the objects,
// and 1.5x dearer with full bodies logged). Values pass through untouched: the thread sees exactly what was queued.
import type { InferenceRecord } from './types.ts';

export type InferenceWire = [
  id: string, createdAt: string, keyId: string | null, route: string, clientFormat: string, requestedModel: string,
  servedModel: string | null, provider: string | null, attempts: InferenceRecord['attempts'], status: number,
  errorCode: string | null, latencyMs: number, ttftMs: number | null, stream: boolean, inputTokens: number,
  outputTokens: number, cacheReadTokens: number, cacheWriteTokens: number, reasoningTokens: number, costUsd: string,
  finishReason: string | null, metadata: Record<string, unknown> | null, extra: Record<string, unknown> | null,
  clientIp: string | null, requestBody: string | null, responseBody: string | null, partial: boolean,
];

export function toWire(x: InferenceRecord): InferenceWire {
  return [x.id, x.createdAt, x.keyId, x.route, x.clientFormat, x.requestedModel, x.servedModel, x.provider, x.attempts,
    x.status, x.errorCode, x.latencyMs, x.ttftMs, x.stream, x.inputTokens, x.outputTokens, x.cacheReadTokens,
    x.cacheWriteTokens, x.reasoningTokens, x.costUsd, x.finishReason, x.metadata, x.extra, x.clientIp, x.requestBody,
    x.responseBody, x.partial === true];
}

export function fromWire(t: InferenceWire): InferenceRecord {
  return {
    id: t[0], createdAt: t[1], keyId: t[2], route: t[3], clientFormat: t[4], requestedModel: t[5], servedModel: t[6],
    provider: t[7], attempts: t[8], status: t[9], errorCode: t[10], latencyMs: t[11], ttftMs: t[12], stream: t[13],
    inputTokens: t[14], outputTokens: t[15], cacheReadTokens: t[16], cacheWriteTokens: t[17], reasoningTokens: t[18],
    costUsd: t[19], finishReason: t[20], metadata: t[21], extra: t[22], clientIp: t[23], requestBody: t[24],
    responseBody: t[25], ...(t[26] ? { partial: true } : {}),
  };
}
