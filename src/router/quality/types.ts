// The quality model's data types: prompt features, outcomes, the learned state and predictions.
// Everything here is plain JSON-able data so it can live in inference records and in the store.

/** Schema of PromptFeatures; features of another schema are ignored by train and predict. */
export const FEATURE_SCHEMA = 2;
/** Schema of QualityState; a state of another schema is treated as empty (retrain from outcomes). */
export const STATE_SCHEMA = 2;

/** Detected task kind of a prompt, most specific first (see features/kind.ts for the rules). */
export const TASK_KINDS = [
  'code', 'math', 'multiple_choice', 'tool_use', 'vision', 'extraction', 'translation',
  'summarization', 'writing', 'reasoning', 'chat',
] as const;
export type TaskKind = (typeof TASK_KINDS)[number];

/** What the router knows about a prompt before any model sees it. */
export type PromptInput = {
  /** System / developer instructions (joined), if any. */
  system?: string;
  /** Text of the conversation turns in order (user and assistant); the last one is being answered. */
  turns: readonly string[];
  /** Number of tools offered (0 or absent: none). */
  tools?: number;
  /** Number of images (and other non-text inputs) in the prompt. */
  images?: number;
  /** Structured output (JSON object or JSON schema) was asked for. */
  jsonOutput?: boolean;
  /** Prompt tokens when the caller counted them already; else estimated from the text. */
  promptTokens?: number;
};

/** Cheap statistics of a prompt (all finite numbers). */
export type PromptStats = {
  /** Characters of all text (system + turns). */
  chars: number;
  /** Prompt tokens: PromptInput.promptTokens, or an estimate from the text (about chars / 4). */
  tokens: number;
  /** Characters of the last turn. */
  lastChars: number;
  turns: number;
  lines: number;
  /** 0..1: how much the text looks like source code (fences, keywords, brackets, indentation). */
  code: number;
  /** 0..1: how much the text looks like mathematics (digits with operators, LaTeX, math words). */
  math: number;
  /** Multiple-choice options found in the last turn (A) / (B) / 1. ... lines), 0 if none. */
  choices: number;
  /** Question marks in the last turn. */
  questions: number;
  /** Share of non-ASCII characters (other scripts, emoji). */
  nonAscii: number;
  tools: number;
  images: number;
  json: boolean;
};

/**
 * Features of one prompt, as stored with the inference record and used by train and predict.
 * `idx`/`val` are a sparse hashed vector (words of the conversation, the last turn and the system prompt), L2
 * normalised, indices unique (order unspecified): treat them as opaque (their meaning is fixed by `schema`).
 */
export type PromptFeatures = {
  schema: typeof FEATURE_SCHEMA;
  kind: TaskKind;
  stats: PromptStats;
  idx: number[];
  val: number[];
};

/** One observed result: a model's answer to a prompt and how good it was. */
export type Outcome = {
  features: PromptFeatures;
  /** Canonical model id: the same model served by several providers shares what is learned. */
  model: string;
  /** Quality in [0, 1] (1 = best); see feedbackScore for feedback metrics. */
  score: number;
  /** How much this outcome counts (default 1; 0 ignores it). */
  weight?: number;
  /** When it was observed, ms since the epoch (evidence decays with TrainOptions.halfLifeDays). */
  time: number;
  /** Observed cost of the answer in USD, if known. */
  costUsd?: number;
  /** Observed completion tokens of the answer, if known. */
  outputTokens?: number;
  /**
   * Present: this outcome corrects one already folded in (the same features, model and time), whose
   * score was `from`, to `score`. It moves the score sums only (weights, costs and output lengths
   * stay), so training the first outcome and then the correction learns what training the
   * corrected outcome would have. Its time is the corrected outcome's, so it weighs what that one
   * weighs now.
   */
  correction?: { from: number };
};

/** Hyper-parameters of train; every field has a documented default (train.ts). */
export type TrainOptions = {
  /** Evidence older than this many days counts half (default: no decay). */
  halfLifeDays?: number;
  /** Time "now" for decay, ms since the epoch (default: the newest outcome's time). */
  now?: number;
};

/** Per-model learned statistics (exposed for explanations; the rest of the state is opaque). */
export type ModelStats = {
  /** Weighted number of outcomes (after decay). */
  n: number;
  /** Weighted mean score. */
  mean: number;
};

/**
 * The learned state: plain JSON-able data. `version` increases by one per train call that added
 * outcomes; `schema` is STATE_SCHEMA. Everything but the documented fields is internal.
 */
export type QualityState = {
  schema: typeof STATE_SCHEMA;
  version: number;
  /** Newest outcome time folded in (ms since the epoch), 0 when empty. */
  trainedUntil: number;
  /** Total weighted outcomes folded in (after decay). */
  outcomes: number;
  models: Record<string, ModelStats>;
  /** Internal learned parameters (predictor tables, centroids, cost and output-token models). */
  learned: LearnedParams;
};

/** Internal; shape owned by train.ts and may grow (new optional fields) within one schema. */
export type LearnedParams = Record<string, unknown>;

/** A candidate model for predict: its canonical id plus hints for the cold-start prior. */
export type ModelRef = {
  /** Canonical model id. */
  id: string;
  /** Model family (e.g. "gpt-4o", "claude-sonnet", "llama-3"), for the documented default prior. */
  family?: string;
  /** Maker of the model (e.g. "openai", "meta"), for the documented default prior. */
  maker?: string;
  /** Blended price in USD per million tokens (3 input : 1 output), for the price-tier prior. */
  pricePerMillion?: number;
};

export type QualitySource = 'learned' | 'benchmark_prior' | 'default_prior';

/** What predict says about one candidate model for one prompt. */
export type QualityEstimate = {
  model: string;
  /** Predicted quality in [0, 1]. */
  q: number;
  /** Weighted number of outcomes behind q for prompts like this one (0: prior only). */
  evidence: number;
  /** evidence / (evidence + prior strength), in [0, 1). */
  confidence: number;
  /** Where q mainly comes from: learned outcomes, the benchmark priors, or the default prior. */
  source: QualitySource;
  /** Expected completion tokens for this prompt kind, learned; undefined if never observed. */
  outputTokens: number | undefined;
  /** Expected cost in USD learned from observed costs; undefined if no outcome carried a cost. */
  costUsd: number | undefined;
};

/** A feedback metric that gateway.yaml names as a quality signal. */
export type QualitySignal = {
  metric: string;
  /** "max": higher is better; "min": lower is better. */
  optimize: 'max' | 'min';
  /** Range of a float metric (mapped linearly to [0, 1]); default [0, 1]. */
  min?: number;
  max?: number;
  /** Globs over API key names: only feedback given with a matching key trains (absent: every key's, and feedback without a key). */
  keys?: string[];
};
