// Feedback values to outcome scores: a metric gateway.yaml names as a quality signal becomes a
// score in [0, 1] with its optimize direction, so feedback trains through the same path as the bench.
import type { Outcome, PromptFeatures, QualitySignal } from './types.ts';

/**
 * The score in [0, 1] (1 = best) that a feedback value gives, or undefined when it carries none:
 * booleans are 1/0 (flipped for optimize "min"); floats are mapped linearly from the signal's
 * [min, max] (default [0, 1]) and clamped; non-finite numbers, comments and an empty range give
 * undefined.
 */
export function feedbackScore(value: unknown, signal: QualitySignal): number | undefined {
  let s: number;
  if (typeof value === 'boolean') s = value ? 1 : 0;
  else if (typeof value === 'number' && Number.isFinite(value)) {
    const lo = signal.min ?? 0;
    const hi = signal.max ?? 1;
    if (!(hi > lo)) return undefined;
    s = Math.min(1, Math.max(0, (value - lo) / (hi - lo)));
  } else return undefined;
  return signal.optimize === 'min' ? 1 - s : s;
}

/** A feedback value joined to its inference record (the features and model routed to). */
export type FeedbackJoin = {
  features: PromptFeatures;
  /** Canonical model id that answered. */
  model: string;
  value: unknown;
  signal: QualitySignal;
  /** When the feedback was given, ms since the epoch. */
  time: number;
  weight?: number;
  costUsd?: number;
  outputTokens?: number;
};

/** The Outcome that train takes for one joined feedback value, or undefined if it carries no score. */
export function feedbackOutcome(j: FeedbackJoin): Outcome | undefined {
  const score = feedbackScore(j.value, j.signal);
  if (score === undefined) return undefined;
  const o: Outcome = { features: j.features, model: j.model, score, time: j.time };
  if (j.weight !== undefined) o.weight = j.weight;
  if (j.costUsd !== undefined) o.costUsd = j.costUsd;
  if (j.outputTokens !== undefined) o.outputTokens = j.outputTokens;
  return o;
}
