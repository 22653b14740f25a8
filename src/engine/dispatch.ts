// The attempt loop: tries the plan's targets in order, retrying or falling back only before the first
// byte reached the client, within the retry budget and honouring retry-after up to a cap.
import { setTimeout as sleep } from 'node:timers/promises';
import type { ModelEntry } from '../config/types.ts';
import { GatewayError } from '../gateway-error.ts';
import type { AttemptRecord } from '../store/types.ts';
import { runAttempt, type AttemptResult } from './attempt.ts';
import { totalTimeout } from './upstream-error.ts';
import { boundedUsage, type UsageBound } from './usage.ts';
import type { Usage } from '../formats/canonical.ts';
import type { InferenceOutcome, InferenceRequest } from './context.ts';
import type { UpstreamHealth } from './health.ts';
import { planAttempts, type AttemptTarget } from './plan.ts';

export type DispatchHooks = {
  onUpstreamError?(provider: string, reason: string): void;
  onFallback?(fromProvider: string): void;
};

/** The answer when the retry budget refuses another attempt: the last failure, saying why it stands. */
export function budgetExhausted(last: GatewayError): GatewayError {
  return new GatewayError(last.code, `${last.message} (retry budget exhausted)`, { status: last.status, kind: last.kind, headers: last.headers });
}

/**
 * An attempt's usage held to its max_cost bound (boundedUsage); a report past it is noted on the
 * attempt's record with what the upstream said, so the clamp is visible where the attempts are shown.
 */
function held(u: Usage, bound: UsageBound, rec: AttemptRecord): Usage {
  const b = boundedUsage(u, bound);
  if (b === null) return u;
  const input = u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens;
  const note = `usage reported past the max_cost bound (output ${u.output_tokens} of at most ${bound.outputTokens}, input ${input} of at most ${bound.inputTokens}) billed at the bound`;
  rec.error = rec.error === null ? note : `${rec.error}; ${note}`;
  return b;
}

/**
 * A failure that says the provider, not the request, is at fault: no response (connect, timeout), a
 * 5xx, or a 2xx with nothing usable in it (an empty or unreadable answer, a stream that closed before
 * content: a provider in trouble often answers so, and its other models sit behind the same servers).
 */
const providerLevel = (out: Extract<AttemptResult, { kind: 'retry' }>): boolean =>
  out.status === null || out.status >= 500 || out.unusable === true;

/**
 * `targets` replaces the configured plan: tried in order, each with its output cap. Router mode's
 * (`routed`): after a provider-level failure (providerLevel) later targets of the same
 * provider are skipped, so a provider that is down costs a request at most one attempt. Not routed: a
 * named model's plan that the key's budget reduced (src/limits/affordable.ts), tried as planAttempts' would be.
 */
export async function dispatch(r: InferenceRequest, primary: ModelEntry, health: UpstreamHealth, hooks: DispatchHooks = {}, targets?: readonly AttemptTarget[], routed = targets !== undefined): Promise<InferenceOutcome> {
  const s = r.cfg.upstream;
  const plan = targets ? targets.map((t) => t.entry) : planAttempts(r.cfg, primary, health);
  const attempts: AttemptRecord[] = [];
  health.countRequest();
  // Built only when an attempt fails: constructing an Error captures a stack, which is not free.
  let last: GatewayError | null = null;
  let i = 0;
  let tries = 0;
  let backoff = 50;
  let staleRetried = false;
  while (i < plan.length && tries < s.maxAttempts) {
    if (last !== null && !health.takeRetry(s.retryBudgetRatio, s.retryBudgetFloor)) {
      last = budgetExhausted(last);
      break;
    }
    const entry = plan[i]!;
    tries++;
    const t0 = performance.now();
    const out = await runAttempt(r, entry, targets?.[i]?.maxOutputTokens);
    const rec: AttemptRecord = { provider: entry.provider.id, model: entry.id, status: out.status, error: null, latencyMs: Math.round(performance.now() - t0) };
    attempts.push(rec);
    const bound = targets?.[i]?.bound;
    if (out.kind === 'done') {
      health.success(entry.provider.id);
      const o = out.observed;
      if (out.partial) rec.error = 'answer cut short';
      const usage = bound && o.usage ? held(o.usage, bound, rec) : o.usage;
      return {
        status: out.status, error: null, served: entry, attempts, usage, finishReason: o.finishReason, ttftMs: out.ttftMs, adjustments: out.adjustments,
        ...(out.responseText !== undefined ? { responseText: out.responseText } : {}), ...(o.result !== undefined ? { result: o.result } : {}),
        ...(out.partial ? { partial: true } : {}),
      };
    }
    if (out.kind === 'aborted') {
      rec.error = 'client disconnected';
      // A stream the client had started is billed for what it consumed (and marked partial).
      const o = out.observed;
      const usage = o?.usage && bound ? held(o.usage, bound, rec) : o?.usage ?? null;
      return { status: 499, error: null, served: entry, attempts, usage, finishReason: o?.finishReason ?? null, ttftMs: out.ttftMs ?? null, adjustments: [], ...(o ? { partial: true } : {}) };
    }
    rec.error = out.error.message;
    if (out.kind === 'final') {
      return { status: out.error.status, error: out.error, served: entry, attempts, usage: null, finishReason: null, ttftMs: null, adjustments: [] };
    }
    last = out.error;
    // A kept-alive connection the upstream had closed (nothing processed): the same target once more,
    // at once, before any fallback; not the provider's failure.
    if (out.again && !staleRetried) { staleRetried = true; continue; }
    hooks.onUpstreamError?.(entry.provider.id, out.error.code);
    health.failure(entry.provider.id, s.ejection);
    if (routed && providerLevel(out)) {
      while (i + 1 < plan.length && plan[i + 1]!.provider.id === entry.provider.id) i++;
    }
    if (i + 1 < plan.length) {
      hooks.onFallback?.(entry.provider.id);
      i++;
      continue;
    }
    // Last target: retry it in place (unless it refused the gateway's credentials), waiting what it
    // asked (up to the cap) or a short back-off.
    if (!out.inPlace) break;
    const wait = out.retryAfterMs ?? backoff;
    if (out.retryAfterMs !== null && out.retryAfterMs > s.retryAfterCapMs) break;
    backoff *= 2;
    try { await sleep(wait, undefined, { signal: r.signal }); } catch {
      if (r.clientGone()) return { status: 499, error: null, served: entry, attempts, usage: null, finishReason: null, ttftMs: null, adjustments: [] };
      last = totalTimeout();
      break;
    }
  }
  last ??= new GatewayError('upstream_unavailable', 'no upstream attempt was made');
  return { status: last.status, error: last, served: null, attempts, usage: null, finishReason: null, ttftMs: null, adjustments: [] };
}
