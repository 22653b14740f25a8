// Key and record rows for limiter tests against a store: an API key with the given limits, and an
// inference record that spent `costUsd` for it at `at`.
import type { InferenceRecord, KeyRecord } from '../../src/store/types.ts';
import { uuidv7 } from '../../src/util/uuid.ts';

export const limitedKey = (id: string, over: Partial<KeyRecord> = {}): KeyRecord => ({
  id, name: 'k', hash: 'h', createdAt: '2030-01-01T00:00:00.000Z', lastUsedAt: null, expiresAt: null, revokedAt: null,
  allowedModels: [], budgetUsd: null, budgetPeriod: null, rpmLimit: null, tpmLimit: null, ...over,
});

export const spendRecord = (k: KeyRecord, costUsd: string, at = new Date()): InferenceRecord => ({
  id: uuidv7(), createdAt: at.toISOString(), keyId: k.id, route: '/v1/chat/completions', clientFormat: 'openai-chat', requestedModel: 'a/b',
  servedModel: 'a/b', provider: 'a', attempts: [], status: 200, errorCode: null, latencyMs: 1, ttftMs: null, stream: false,
  inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, costUsd, finishReason: 'stop',
  metadata: null, extra: null, clientIp: null, requestBody: null, responseBody: null,
});
