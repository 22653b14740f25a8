// The router's quality model: the one import the rest of the router uses.
//
// CONTRACT (stable; extended, never broken; schema numbers change only with a migration path):
// - extractPromptFeatures(input: PromptInput): PromptFeatures
//     Pure, synchronous, no I/O; cost bounded whatever the prompt length (head and tail slices).
//     PromptFeatures is plain JSON (store it with the inference record as is); `kind` and `stats`
//     are public, `idx`/`val` are opaque. `schema` says which extractor made them.
// - train(outcomes: Outcome[], previous?: QualityState, options?: TrainOptions): QualityState
//     Pure function of its arguments (never modifies `previous`): returns previous + outcomes.
//     Used the same way by the feedback worker (new outcomes since the last state) and by the
//     offline bench (the train file in batches of 5000). Outcome.model is the canonical model id.
//     Runs in the training worker: a cold fit of a large state takes seconds, a warm one milliseconds.
//     The state is plain JSON (store it as is); `version` grows by one per call that added data.
// - predict(state, features, models: (string | ModelRef)[], options?): QualityEstimate[]
//     One estimate per model in the given order: q in [0, 1] (lowered where the model's own
//     evidence for such prompts is thin: it earns traffic there on evidence), evidence and confidence,
//     source ('learned' | 'benchmark_prior' | 'default_prior'), expected output tokens and (when
//     outcomes carried costs) expected cost. Unseen models get the cold-start prior (priors.json
//     by task category, else DEFAULT_PRIOR by family/price); options.priors = null disables the
//     benchmark priors (offline bench). Synchronous and cheap: meant for the request path.
// - prepareState(state): void
//     Optional: builds what predict derives from a state once (about 10 ms of CPU for a large state);
//     call it when a new state arrives so the first routed request does not pay it.
// - packState(state): { state, transfer }; isPacked(state)
//     The state for another thread: the stored prompts' index built here, its typed arrays' buffers in
//     `transfer` (post with them in the transfer list); the receiver predicts with it as with the
//     original but cannot train on or store it. Used by the training worker.
// - feedbackScore(value, signal: QualitySignal): number | undefined; feedbackOutcome(join): Outcome | undefined
//     A feedback value of a metric named as a quality signal -> Outcome.score (optimize honoured).
// - emptyState(): the state with nothing learned (version 0).
export { extractPromptFeatures, estimateTokens } from './features.ts';
export { train, emptyState, usable } from './train.ts';
export { predict, prepareState, type PredictOptions } from './predict.ts';
export { packState, isPacked } from './portable.ts';
export { feedbackScore, feedbackOutcome, type FeedbackJoin } from './feedback.ts';
export { builtinPriors, compilePriors, priorFor, priorKey, normalId, familyOf, DEFAULT_PRIOR, CATEGORY_OF_KIND, type CompiledPriors, type PriorTable } from './prior.ts';
export {
  FEATURE_SCHEMA, STATE_SCHEMA, TASK_KINDS,
  type TaskKind, type PromptInput, type PromptStats, type PromptFeatures, type Outcome, type TrainOptions,
  type QualityState, type ModelStats, type ModelRef, type QualityEstimate, type QualitySource, type QualitySignal,
} from './types.ts';
