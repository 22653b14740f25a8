// Seeded, deterministic traffic for bench/dashboard.ts: inference records spread over a time window
// (50 keys, each using three of twelve models over two routes, 3% failures, some streamed, cached and
// partial answers, one router decision per 20 records) and feedback on about 10% of them.
import type { FeedbackRow, InferenceRecord } from '../../src/store/types.ts';
import { uuidv7 } from '../../src/util/uuid.ts';

export const MODELS = [
  ['openai', 'gpt-5'], ['openai', 'gpt-5-mini'], ['openai', 'gpt-4.1'], ['anthropic', 'claude-sonnet-4-5'], ['anthropic', 'claude-haiku-4-5'],
  ['anthropic', 'claude-opus-4-1'], ['gemini', 'gemini-2.5-pro'], ['gemini', 'gemini-2.5-flash'], ['bedrock', 'amazon.nova-pro'],
  ['groq', 'llama-3.3-70b'], ['mistral', 'mistral-large'], ['deepseek', 'deepseek-chat'],
] as const;
export const KEYS = Array.from({ length: 50 }, (_, i) => `benchkey${String(i).padStart(4, '0')}`);

/** Deterministic pseudo-random numbers, so every run seeds the same data. */
export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => { s = (s * 1664525 + 1013904223) >>> 0; return s / 2 ** 32; };
}

/** `n` records evenly over [end - spanMs, end), oldest first, in batches of `batch`. */
export function* records(n: number, end: number, seed: number, spanMs: number, batch = 5000): Generator<InferenceRecord[]> {
  const r = rng(seed);
  for (let i = 0; i < n; i += batch) {
    const out: InferenceRecord[] = [];
    for (let j = i; j < Math.min(n, i + batch); j++) {
      const t = end - spanMs + Math.floor((j / n) * spanMs);
      const k = Math.floor(r() * KEYS.length);
      const [prov, model] = MODELS[(k * 3 + Math.floor(r() * 3)) % MODELS.length]!;
      const failed = r() < 0.03;
      const input = 50 + Math.floor(r() * 4000), output = failed ? 0 : 20 + Math.floor(r() * 800);
      const latency = Math.floor(150 + r() * r() * 8000);
      const partial = !failed && r() < 0.01;
      out.push({
        id: uuidv7(t), createdAt: new Date(t).toISOString(), keyId: KEYS[k]!, route: r() < 0.8 ? '/v1/chat/completions' : '/v1/messages',
        clientFormat: 'openai-chat', requestedModel: `${prov}/${model}`, servedModel: failed ? null : `${prov}/${model}`, provider: failed ? null : prov,
        attempts: [{ provider: prov, model, status: failed ? 502 : 200, error: failed ? 'upstream 502' : null, latencyMs: latency }],
        status: failed ? 502 : 200, errorCode: failed ? 'upstream_error' : null, latencyMs: latency, ttftMs: r() < 0.6 ? Math.floor(latency / 4) : null,
        stream: r() < 0.6, inputTokens: input, outputTokens: output, cacheReadTokens: r() < 0.3 ? Math.floor(input / 2) : 0, cacheWriteTokens: 0,
        reasoningTokens: 0, costUsd: ((input * 3 + output * 15) / 1e6).toFixed(6), finishReason: failed ? null : partial ? null : 'stop', metadata: { app: `app${k % 5}` },
        extra: null, clientIp: '127.0.0.1', requestBody: r() < 0.1 ? JSON.stringify({ model, messages: [{ role: 'user', content: 'x'.repeat(200) }] }) : null, responseBody: null,
        ...(partial ? { partial: true } : {}),
      });
    }
    yield out;
  }
}

/** Feedback on about 10% of the answered records, a second after each: a boolean `helpful` or a float `quality`. */
export function feedbackFor(recs: readonly InferenceRecord[], seed: number): FeedbackRow[] {
  const r = rng(seed);
  return recs.filter(() => r() < 0.1).filter((x) => x.servedModel).map((x) => {
    const at = new Date(Date.parse(x.createdAt) + 1000).toISOString();
    const helpful = r() < 0.5;
    const v = Math.round(r() * 100) / 100;
    return {
      id: uuidv7(Date.parse(at)), inferenceId: x.id, keyId: x.keyId, metric: helpful ? 'helpful' : 'quality', type: helpful ? 'boolean' as const : 'float' as const,
      value: helpful ? (v > 0.3 ? 'true' : 'false') : String(v), reason: null, tags: {}, optimize: 'max' as const, createdAt: at,
    };
  });
}

/** A compact recorded router decision (the shape src/router/explain.ts recordedDecision stores) for every 20th record. */
export function decisionsFor(recs: readonly InferenceRecord[]): Array<[string, string, string | null, string | null, string]> {
  return recs.filter((_, i) => i % 20 === 0).map((x) => [x.id, x.createdAt, x.keyId, x.servedModel, JSON.stringify({
    w: 1, policy: null, state_version: 1, kind: 'chat', explored: false, affinity: null, chosen: x.servedModel, chosen_quality: 0.8,
    chosen_cost_usd: 0.001, input_tokens: x.inputTokens, token_method: 'exact', expected_output_tokens: 300,
    plan: [[x.servedModel ?? x.requestedModel, null]], candidates: 12, excluded_by: { max_cost: 2 },
    included: [[x.servedModel ?? x.requestedModel, 0.8, 0.001, 7.99]], excluded: { max_cost: [['openai/gpt-5', 0.02, 0.01]] }, attempts: x.attempts,
  })]);
}
