// The attempt loop: tries the plan's targets in order, retrying or falling back only before the first
// byte reached the client, within the retry budget and honouring retry-after up to a cap.
import { setTimeout as sleep } from 'node:timers/promises';
import type { ModelEntry } from '../config/types.ts';
import { GatewayError } from '../http/errors.ts';
import type { AttemptRecord } from '../store/types.ts';
import { runAttempt } from './attempt.ts';
import type { InferenceOutcome, InferenceRequest } from './context.ts';
import type { UpstreamHealth } from './health.ts';
import { planAttempts } from './plan.ts';

export type DispatchHooks = {
  onUpstreamError?(provider: string, reason: string): void;
  onFallback?(fromProvider: string): void;
};

/** The answer when the retry budget refuses another attempt: the last failure, saying why it stands. */
export function budgetExhausted(last: GatewayError): GatewayError {
  return new GatewayError(last.code, `${last.message} (retry budget exhausted)`, { status: last.status, kind: last.kind, headers: last.headers });
}

export async function dispatch(r: InferenceRequest, primary: ModelEntry, health: UpstreamHealth, hooks: DispatchHooks = {}): Promise<InferenceOutcome> {
  const s = r.cfg.upstream;
  const plan = planAttempts(r.cfg, primary, health);
  const attempts: AttemptRecord[] = [];
  health.countRequest();
  // Built only when an attempt fails: constructing an Error captures a stack, which is not free.
  let last: GatewayError | null = null;
  let i = 0;
  let tries = 0;
  let backoff = 50;
  while (i < plan.length && tries < s.maxAttempts) {
    if (last !== null && !health.takeRetry(s.retryBudgetRatio, s.retryBudgetFloor)) {
      last = budgetExhausted(last);
      break;
    }
    const entry = plan[i]!;
    tries++;
    const t0 = performance.now();
    const out = await runAttempt(r, entry);
    const rec: AttemptRecord = { provider: entry.provider.id, model: entry.id, status: out.status, error: null, latencyMs: Math.round(performance.now() - t0) };
    attempts.push(rec);
    if (out.kind === 'done') {
      health.success(entry.provider.id);
      return { status: out.status, error: null, served: entry, attempts, usage: out.observed.usage, finishReason: out.observed.finishReason, ttftMs: out.ttftMs, adjustments: out.adjustments, ...(out.responseText !== undefined ? { responseText: out.responseText } : {}) };
    }
    if (out.kind === 'aborted') {
      rec.error = 'client disconnected';
      return { status: 499, error: null, served: entry, attempts, usage: null, finishReason: null, ttftMs: null, adjustments: [] };
    }
    rec.error = out.error.message;
    if (out.kind === 'final') {
      return { status: out.error.status, error: out.error, served: entry, attempts, usage: null, finishReason: null, ttftMs: null, adjustments: [] };
    }
    last = out.error;
    hooks.onUpstreamError?.(entry.provider.id, out.error.code);
    health.failure(entry.provider.id, s.ejection);
    if (i + 1 < plan.length) {
      hooks.onFallback?.(entry.provider.id);
      i++;
      continue;
    }
    // Last target: retry it in place, waiting what it asked (up to the cap) or a short back-off.
    const wait = out.retryAfterMs ?? backoff;
    if (out.retryAfterMs !== null && out.retryAfterMs > s.retryAfterCapMs) break;
    backoff *= 2;
    try { await sleep(wait, undefined, { signal: r.signal }); } catch {
      return { status: 499, error: null, served: entry, attempts, usage: null, finishReason: null, ttftMs: null, adjustments: [] };
    }
  }
  last ??= new GatewayError('upstream_unavailable', 'no upstream attempt was made');
  return { status: last.status, error: last, served: null, attempts, usage: null, finishReason: null, ttftMs: null, adjustments: [] };
}
