// Strict upper bounds on what a prompt can be billed as input, for hard cost limits (router max_cost):
// a bound must hold for any tokenizer a provider runs, not only on average. Text is bounded by its
// UTF-8 bytes: byte-level BPE (OpenAI, Anthropic, Llama, Mistral, ...) never makes more tokens than
// bytes, and SentencePiece with byte fallback (Gemini, Gemma) at most one more per text (its prefix
// marker). What is not text is bounded by the providers' documented maxima below.
import type { EstimateFamily } from './families.ts';

export type Family = 'openai' | EstimateFamily;

/** Ceiling tokens of one text of `bytes` UTF-8 bytes counted by no tokenizer of ours. */
export const textCeiling = (bytes: number): number => (bytes === 0 ? 0 : bytes + 1);

/**
 * Chat framing (tokens per message and once per request) for families whose template is not public:
 * twice the largest public template's (ChatML and Llama 3 use 4-5 per message and 3 for the reply).
 * OpenAI families use their documented framing, which counts exactly (src/tokens/index.ts).
 */
export const FRAMING_CEILING = { perMessage: 10, base: 8 } as const;

/**
 * One image at the largest size a provider accepts: OpenAI's dearest documented scheme (gpt-4o-mini:
 * 2833 base + 5667 per 512 px tile, 8 tiles at 2048x768: 48,169), Anthropic's documented cap (images
 * scaled to a 1568 px long edge, about 1,600 tokens; taken 3x for models reading higher resolutions), Gemini's (media resolution high: 1,120; 258 per 768 px
 * tile of older models, 16 tiles: 4,128); unknown families take the largest of them.
 */
export const IMAGE_CEILING: Readonly<Record<Family, number>> = { openai: 48_169, anthropic: 4_800, gemini: 4_128, generic: 48_169 };

/**
 * A tool definition's rendering is not public (OpenAI renders a TypeScript-like namespace, others a
 * JSON or XML block): bounded by its JSON's bytes plus this many tokens of header; a tool call or
 * result in a message by its text plus this much framing.
 */
export const TOOL_DEFINITION_EXTRA = 64;
export const TOOL_TURN_EXTRA = 32;

/**
 * A binary document (PDF) has no bound derived from its size (compressed text, page images): its
 * ceiling is unbounded, and the router caps every ceiling at the model's context window (a prompt
 * longer than the window is refused, not billed).
 */
export const DOCUMENT_CEILING = Number.POSITIVE_INFINITY;
