// extractPromptFeatures: cheap, deterministic features of a prompt (no network, no model): hashed
// words and word pairs, prompt statistics and the detected task kind, from one pass over bounded
// slices of the text (scan.ts), so the cost stays flat however long the prompt is.
import { finishVector } from './hashing.ts';
import { detectKind, codeScore, mathScore } from './kind.ts';
import { beginScan, countOnly, scan, scanned } from './scan.ts';
import { FEATURE_SCHEMA, type PromptFeatures, type PromptInput } from './types.ts';

/**
 * The shape of the feature vector (fixed per FEATURE_SCHEMA; exported for the cross-validation
 * bench, which compares shapes). Bounds keep extraction flat in the prompt's length.
 */
export const SHAPE = {
  /**
   * Characters of the conversation hashed for words: a quarter from its start, the rest from its end
   * (cross-validated: 2,000 did no better, and costs twice the hashing).
   */
  words: 1000,
  /** Word bigrams in the conversation namespace (unigrams always; cross-validated: no gain, more hashing). */
  bigrams: false,
  /** Characters of the last turn's tail whose words count `tailCount` times (what is being asked). */
  tail: 600,
  tailCount: 2,
  /** Characters of the system prompt hashed (half from its start, half from its end). */
  system: 1000,
  /** Largest weights kept in the stored vector (about 3 KB of JSON per record). */
  keep: 256,
  /** Weights of the namespaces (conversation, system) in the vector. */
  weight: [1, 0.5],
};

/** Namespaces (hashing.ts seeds them). */
const NS = { words: 0, system: 1 } as const;

/**
 * Scans texts as if joined by newlines, `head` characters from the start and `tailLen` from the
 * end (everything when they cover it; the middle is only counted). Words of the last text from
 * absolute position `tailFrom` of it on also go to the tail namespace.
 */
function scanParts(texts: readonly string[], total: number, head: number, tailLen: number, ns: number, tailFrom: number): void {
  const all = total <= head + tailLen;
  let at = 0; // position of texts[k] in the joined text
  const last = texts.length - 1;
  for (let k = 0; k <= last; k++) {
    const t = texts[k]!, end = at + t.length;
    const tf = k === last ? tailFrom : Infinity;
    if (all) scan(t, 0, t.length, ns, SHAPE.bigrams, tf, SHAPE.tailCount);
    else {
      // [0, head) and [total - tailLen, total) of the joined text, intersected with this part.
      const a = Math.min(t.length, Math.max(0, head - at)), b = Math.max(0, Math.min(t.length, total - tailLen - at));
      if (a > 0) scan(t, 0, a, ns, SHAPE.bigrams, tf, SHAPE.tailCount);
      if (b > a) countOnly(t, a, b);
      const from = Math.max(a, b);
      if (from < t.length) scan(t, from, t.length, ns, SHAPE.bigrams, tf, SHAPE.tailCount);
    }
    at = end + 1;
  }
}

/** Features of a prompt; pure and deterministic (same input, same features). */
export function extractPromptFeatures(input: PromptInput): PromptFeatures {
  const turns = input.turns;
  const last = turns.length > 0 ? turns[turns.length - 1]! : '';
  const system = input.system ?? '';
  let turnChars = Math.max(0, turns.length - 1);
  for (const t of turns) turnChars += t.length;
  const chars = turnChars + (system ? system.length + (turns.length > 0 ? 1 : 0) : 0);
  beginScan();
  if (system) scanParts([system], system.length, SHAPE.system >> 1, SHAPE.system >> 1, NS.system, Infinity);
  scanParts(turns, turnChars, SHAPE.words >> 2, SHAPE.words - (SHAPE.words >> 2), NS.words, Math.max(0, last.length - SHAPE.tail));
  const vec = finishVector(SHAPE.weight, SHAPE.keep);
  const lines = scanned.lines + (system && turns.length > 0 ? 1 : 0) + Math.max(0, turns.length - 1) + 1;
  const nonAscii = scanned.nonAscii;
  let choices = 0;
  for (let o = scanned.options; o; o &= o - 1) choices++;
  if (choices < 2) choices = 0;
  const flags = { tools: Math.max(0, input.tools ?? 0), images: Math.max(0, input.images ?? 0), json: input.jsonOutput === true };
  const tokens = input.promptTokens !== undefined && input.promptTokens >= 0 ? input.promptTokens : tokensFromCounts(chars, nonAscii);
  const tailChars = Math.min(last.length, SHAPE.tail);
  return {
    schema: FEATURE_SCHEMA,
    kind: detectKind({ all: scanned.all, tail: scanned.tail, choices, tailChars, ...flags }),
    stats: {
      chars, tokens, lastChars: last.length, turns: turns.length, lines,
      code: codeScore(scanned.all), math: mathScore(scanned.all), choices, questions: scanned.questions,
      nonAscii: chars > 0 ? Math.round((nonAscii / chars) * 1e4) / 1e4 : 0,
      tools: flags.tools, images: flags.images, json: flags.json,
    },
    idx: vec.idx,
    val: vec.val,
  };
}

/**
 * Tokens of a text without a tokenizer: about 4 characters a token for English and code; text in
 * other scripts runs nearer 1-1.5 characters a token, counted from the non-ASCII share.
 */
export function estimateTokens(text: string): number {
  let nonAscii = 0;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 127) nonAscii++;
  return tokensFromCounts(text.length, nonAscii);
}

const tokensFromCounts = (chars: number, nonAscii: number): number => Math.ceil((chars - nonAscii) / 4 + nonAscii / 1.5);
