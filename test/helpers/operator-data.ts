// A store filled the way an operator's looks after a month: thousands of requests over 30 days across 40
// models and 15 keys, costs from $0.0000004 to $1,234.56, errors of every status, routed requests with
// decisions and feedback, names that are very long or carry markup, RTL text and emoji, days with no
// traffic at all, and keys whose budget is exactly spent or overspent. Deterministic (a seeded generator)
// so a browser test can assert on what the pages show.
import { insertDecisions, type DecisionRow } from '../../src/router/store.ts';
import type { FeedbackRow, InferenceRecord, Store } from '../../src/store/types.ts';
import { uuidv7 } from '../../src/util/uuid.ts';

export const LONG_MODEL = `mockai/${'very-long-fine-tuned-model-name-'.repeat(6)}v2`;
export const HTML_NAME = '<b>bold</b><img src=x onerror="window.__xss=1">';
export const RTL_NAME = 'مفتاح الإنتاج הפקה';
export const EMOJI_NAME = '🚀 launch key 🔥🔥';

export const MODELS: string[] = [
  ...Array.from({ length: 36 }, (_, i) => `${['mockai', 'otherai', 'thirdai'][i % 3]}/model-${String(i).padStart(2, '0')}`),
  LONG_MODEL, `mockai/${HTML_NAME}`, `mockai/${RTL_NAME}`, `mockai/${EMOJI_NAME}`,
];

export type SeededKey = { id: string; name: string; budgetUsd: string | null; budgetPeriod: 'day' | 'week' | 'month' | 'total' | null };

export const KEYS: SeededKey[] = [
  ...Array.from({ length: 11 }, (_, i): SeededKey => ({ id: `key${String(i).padStart(2, '0')}`, name: `team-${i}-service`, budgetUsd: i % 3 === 0 ? '500' : null, budgetPeriod: i % 3 === 0 ? 'month' : null })),
  { id: 'keylong', name: `production-${'extraordinarily-long-key-name-'.repeat(5)}end`, budgetUsd: null, budgetPeriod: null },
  { id: 'keyhtml', name: HTML_NAME, budgetUsd: null, budgetPeriod: null },
  { id: 'keyexact', name: `${RTL_NAME} exact budget`, budgetUsd: '10', budgetPeriod: 'total' },
  { id: 'keyover', name: `${EMOJI_NAME} over budget`, budgetUsd: '5', budgetPeriod: 'total' },
];

const STATUSES = [400, 401, 402, 403, 404, 408, 413, 422, 429, 499, 500, 502, 503, 504, 529];
const COSTS = ['0.0000004', '0.000001', '0.0000123', '0.000456', '0.0089', '0.0451', '0.3', '2.5', '17.25', '1234.56'];

/** A small deterministic generator (mulberry32). */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export type OperatorData = { now: number; inferenceIds: string[]; routedIds: string[]; quietDays: number[] };

/**
 * Writes the keys, `count` records over the 30 days before `now` (none on the quiet days, counted back
 * from now), a decision for every fifth and feedback on some of those. Keys 'keyexact' and 'keyover'
 * get records whose costs add up to exactly their budget and to one and a half times it.
 */
export async function seedOperatorData(store: Store, o: { now?: number; count?: number; quietDays?: number[] } = {}): Promise<OperatorData> {
  const now = o.now ?? Date.now();
  const count = o.count ?? 4000;
  const quietDays = o.quietDays ?? [10, 11, 12];
  const r = rng(38);
  for (const [i, k] of KEYS.entries()) {
    await store.insertKey({ id: k.id, name: k.name, hash: `hash-${k.id}`, createdAt: new Date(now - 40 * 86_400_000 + i * 60_000).toISOString(), lastUsedAt: null,
      expiresAt: null, revokedAt: null, allowedModels: [], budgetUsd: k.budgetUsd, budgetPeriod: k.budgetPeriod, rpmLimit: i % 4 === 0 ? 600 : null, tpmLimit: null });
  }
  const recs: InferenceRecord[] = [];
  const decisions: DecisionRow[] = [];
  const feedback: FeedbackRow[] = [];
  const record = (at: number, keyId: string, model: string, status: number, cost: string, routed: boolean): InferenceRecord => {
    const id = uuidv7(at);
    const ok = status < 400;
    return {
      id, createdAt: new Date(at).toISOString(), keyId, route: r() < 0.7 ? '/v1/chat/completions' : '/v1/messages', clientFormat: 'openai-chat',
      requestedModel: routed ? 'router' : model, servedModel: ok || status >= 500 ? model : null, provider: ok ? model.split('/')[0]! : null,
      attempts: [{ provider: model.split('/')[0]!, model: model.split('/').slice(1).join('/'), status, error: ok ? null : `upstream said ${status}`, latencyMs: 50 + Math.floor(r() * 4000) }],
      status, errorCode: ok ? null : `status_${status}`, latencyMs: 60 + Math.floor(r() * r() * 30_000), ttftMs: r() < 0.5 ? 20 + Math.floor(r() * 900) : null, stream: r() < 0.5,
      inputTokens: Math.floor(r() * 200_000), outputTokens: Math.floor(r() * 8000), cacheReadTokens: Math.floor(r() * 5000), cacheWriteTokens: 0, reasoningTokens: Math.floor(r() * 300),
      costUsd: ok ? cost : '0', finishReason: ok ? 'stop' : null, metadata: null, extra: null, clientIp: null, requestBody: null, responseBody: null,
    };
  };
  const inferenceIds: string[] = [];
  const routedIds: string[] = [];
  for (let i = 0; i < count; i++) {
    let at = now - Math.floor(r() * 30 * 86_400_000);
    const day = Math.floor((now - at) / 86_400_000);
    if (quietDays.includes(day)) at -= (quietDays[quietDays.length - 1]! - day + 1) * 86_400_000;
    const key = KEYS[Math.floor(r() * 13)]!;
    const model = MODELS[Math.floor(r() * r() * MODELS.length)]!;
    const status = r() < 0.9 ? 200 : STATUSES[Math.floor(r() * STATUSES.length)]!;
    const cost = COSTS[Math.floor(r() * r() * r() * COSTS.length)]!;
    const routed = i % 5 === 0;
    const rec = record(at, key.id, model, status, cost, routed);
    recs.push(rec);
    inferenceIds.push(rec.id);
    if (routed) {
      routedIds.push(rec.id);
      const kind = ['code', 'math', 'chat', 'writing'][i % 4]!;
      decisions.push({
        inferenceId: rec.id, createdAt: new Date(at + 300).toISOString(), keyId: key.id, servedModel: rec.servedModel, canonical: rec.servedModel, kind, status, costUsd: rec.costUsd,
        features: { schema: 1, kind, stats: {}, idx: [], val: [] } as never,
        decision: {
          w: 0.002, policy: null, state_version: 1 + Math.floor((now - at) / (7 * 86_400_000)), kind, explored: i % 35 === 0, affinity: null, chosen: rec.servedModel,
          chosen_quality: 0.5 + r() * 0.4, chosen_cost_usd: Number(cost), input_tokens: rec.inputTokens, token_method: 'exact', expected_output_tokens: 500,
          plan: rec.servedModel ? [[rec.servedModel, null]] : [], candidates: 40, excluded_by: i % 3 ? { max_cost: 12 } : { 'capability:tools': 3 },
          included: [[model, 0.7, Number(cost), 1.2], [MODELS[0]!, 0.6, 0.000001, 0.9]], excluded: { max_cost: [[MODELS[39]!, 0.5, 0.4]] }, attempts: [],
        },
      });
      if (r() < 0.4) {
        feedback.push({ id: uuidv7(at + 1000), inferenceId: rec.id, keyId: key.id, metric: 'helpful', type: 'boolean', value: r() < 0.7 ? 'true' : 'false', reason: null, tags: {},
          optimize: 'max', createdAt: new Date(Math.min(now, at + 60_000)).toISOString() });
      }
    }
  }
  // Budgets exactly spent ($10 of $10) and overspent ($7.50 of $5), in records of this last day.
  for (const [keyId, costs] of [['keyexact', ['2.5', '2.5', '2.5', '2.5']], ['keyover', ['2.5', '2.5', '2.5']]] as const) {
    for (const [j, c] of costs.entries()) {
      const rec = record(now - 3_600_000 - j * 60_000, keyId, MODELS[1]!, 200, c, false);
      recs.push(rec);
      inferenceIds.push(rec.id);
    }
  }
  recs.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  for (let i = 0; i < recs.length; i += 500) await store.insertInferences(recs.slice(i, i + 500));
  decisions.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  for (let i = 0; i < decisions.length; i += 500) await insertDecisions(store.sql, decisions.slice(i, i + 500));
  for (let i = 0; i < feedback.length; i += 500) await store.insertFeedback(feedback.slice(i, i + 500));
  return { now, inferenceIds, routedIds, quietDays };
}
