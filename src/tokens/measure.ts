// One prompt measured once for every tokenizer a decision needs: per text its estimate and UTF-8
// bytes (shared by every estimate family), exact counts per encoding on demand within a character
// budget (texts seen before are free: counts are cached), and a strict ceiling per family.
import { exactCounter } from './encoders.ts';
import { hasRunOver } from './exact-cost.ts';
import { ESTIMATE_MARGIN, estimateShape, reserveTextTokens, textShape, textShapeSliced, type TextShape } from './estimate.ts';
import type { Encoding, EstimateFamily, TokenizerId } from './families.ts';
import { DOCUMENT_CEILING, FRAMING_CEILING, IMAGE_CEILING, TOOL_DEFINITION_EXTRA, TOOL_TURN_EXTRA, textCeiling, type Family } from './ceiling.ts';
import { expectedImageTokens, familyImageRule, imageTokens, type ImageRule } from './images.ts';
import type { PromptParts } from './prompt.ts';
import { TextCache } from '../util/text-cache.ts';

/**
 * `tokens`: what the provider is expected to bill as input (exact where `exact`). `ceiling`: a strict
 * upper bound on it (src/tokens/ceiling.ts), for hard cost limits; equal to `tokens` when exact.
 */
export type TokenCount = { tokens: number; exact: boolean; method: string; ceiling: number };

/**
 * Framing per family: tokens per message and the reply priming. OpenAI: the cookbook's count for
 * gpt-3.5-turbo-0613 on (3 per message, +1 for the role name, +3 priming), exact. Anthropic: fitted
 * to the documented count_tokens example (system "You are a scientist" + user "Hello, Claude" = 14
 * input tokens). Others: a ChatML/Llama-3 style template (5 per message).
 */
const FRAMING: Readonly<Record<Family, { perMessage: number; base: number }>> = {
  openai: { perMessage: 4, base: 3 },
  anthropic: { perMessage: 3, base: 1 },
  gemini: { perMessage: 5, base: 3 },
  generic: { perMessage: 5, base: 3 },
};

const MAX_FRAMING = {
  perMessage: Math.max(...Object.values(FRAMING).map((f) => f.perMessage)), base: Math.max(...Object.values(FRAMING).map((f) => f.base)),
};

/** Tokens of an image whose size is unknown: OpenAI high detail 1024x1024 (765), Anthropic's cap (~1600), Gemini 258. */
const IMAGE_TOKENS: Readonly<Record<Family, number>> = { openai: 765, anthropic: 1600, gemini: 258, generic: 1000 };
const MAX_IMAGE_TOKENS = Math.max(...Object.values(IMAGE_TOKENS));
/** A binary document: base64 characters -> bytes, about one token per 3 bytes of PDF, at least 1000 (a page with its image). */
const documentTokens = (b64chars: number): number => Math.max(1000, Math.ceil((b64chars * 0.75) / 3));
/** Framing of one tool definition or tool call beyond its JSON text (OpenAI's cookbook puts it near 10). */
const TOOL_OVERHEAD = 10;

/**
 * A text's estimate, UTF-8 bytes, what a budget reservation takes it at (estimate.ts reserveTextTokens;
 * openaiReserve), and whether it holds a run of non-whitespace longer than MAX_EXACT_RUN (never counted exactly).
 */
type Measured = { readonly est: number; readonly bytes: number; readonly res: number; readonly resOpenai: number; readonly longRun: boolean };

/**
 * The longest run of non-whitespace a text counted exactly may hold (exact-cost.ts): a run of 1,024
 * random CJK characters encodes in a few ms, 16,384 in 0.4-0.7 s. URLs, hashes and base64 below it stay exact.
 */
const MAX_EXACT_RUN = 1024;

/** Measures of long texts, remembered (a conversation resends its earlier turns). */
const EST_CACHE_MIN = 256;
const EST_CACHE_MAX_CHARS = 8_000_000;
const estCache = new TextCache<Measured>(EST_CACHE_MAX_CHARS);

function measureText(s: string): Measured {
  if (s.length >= EST_CACHE_MIN) {
    const hit = estCache.get(s);
    if (hit !== undefined) return hit;
  }
  return rememberMeasure(s, textShape(s));
}

/**
 * What a reservation takes a text at for an OpenAI encoding when it was not counted exactly: the
 * estimate x ESTIMATE_MARGIN, measured against those encodings on common text of every class; its
 * UTF-8 bytes (the strict ceiling) when it holds wide characters (CJK, emoji, other scripts outside
 * Latin, Greek and Cyrillic), whose counts the margin does not cover once they are rare (CJK extension
 * blocks, random Hangul syllables: reserved/real 0.33-0.51 at the margin), or a run of
 * non-whitespace longer than MAX_EXACT_RUN (never counted: exact-cost.ts).
 */
function openaiReserve(shape: TextShape, est: number, bytes: number, longRun: boolean): number {
  const ceiling = textCeiling(bytes);
  if (shape.wide > 0 || longRun) return ceiling;
  return Math.min(Math.ceil(est * ESTIMATE_MARGIN), ceiling);
}

function rememberMeasure(s: string, shape: TextShape): Measured {
  const bytes = Buffer.byteLength(s, 'utf8');
  const est = s.length === 0 ? 0 : Math.max(1, Math.round(estimateShape(shape)));
  const longRun = hasRunOver(s, MAX_EXACT_RUN);
  const m: Measured = { est, bytes, res: reserveTextTokens(shape, bytes), resOpenai: openaiReserve(shape, est, bytes, longRun), longRun };
  if (s.length >= EST_CACHE_MIN) estCache.set(s, m);
  return m;
}

/** Texts of `parts` of at least `minChars` whose estimate is not remembered yet. */
export function unmeasured(parts: PromptParts, minChars: number): readonly string[] {
  // A list only for a prompt that has some (every routed request asks).
  let out: string[] | null = null;
  for (const m of parts.messages) for (const s of m.texts) if (isNew(s, minChars)) (out ??= []).push(s);
  for (const s of parts.tools) if (isNew(s, minChars)) (out ??= []).push(s);
  return out ?? [];
}
const isNew = (s: string, minChars: number): boolean => s.length >= minChars && !estCache.has(s);

/** Estimates `texts` a slice at a time (pause between slices) and remembers them, as measuring them later finds them. */
export async function measureLater(texts: readonly string[], sliceChars: number, pause: () => Promise<void>): Promise<void> {
  for (const s of texts) rememberMeasure(s, await textShapeSliced(s, sliceChars, pause));
}

export type MeasureOptions = {
  /** Characters not seen before that count() may encode exactly for this prompt (the rest is estimated). */
  exactChars: number;
  /** The same for bound(): how much more may be encoded when a hard limit needs a tight ceiling. */
  boundChars: number;
  /**
   * bound() encodes no more than this many new characters itself: past it, the texts are listed in
   * `deferred` and the loose ceiling stands (safe, less generous), for the caller to count them with
   * the event loop free between slices (countLater) and measure again. Absent: bound() encodes them.
   */
  deferChars?: number | undefined;
};

/** Exact counts of one encoding: per text, or -1 where the text was estimated. */
type ExactCounts = { per: number[]; counted: number };

/** PromptTokens.deferred when nothing was deferred. */
const NONE_DEFERRED: ReadonlyMap<Encoding, readonly string[]> = new Map();

/**
 * One per routed request: its lists are allocated at their size and its memos are plain objects
 * (made on first use where most prompts need none): lists grown by push and three Maps were about
 * 1.5 KB a request, more than the prompt's text of a short chat.
 */
export class PromptTokens {
  readonly parts: PromptParts;
  /** Message texts then tool definitions, with their estimates and bytes. */
  readonly #texts: string[];
  readonly #est: number[];
  readonly #bytes: number[];
  /** Per text, what a reservation takes it at without an exact count. */
  readonly #res: number[];
  /** Per text, what a reservation for an OpenAI encoding takes it at without an exact count (openaiReserve). */
  readonly #resOpenai: number[];
  /** Per text, whether it holds a run of non-whitespace longer than MAX_EXACT_RUN (Measured.longRun). */
  readonly #longRun: boolean[];
  readonly #toolsFrom: number;
  /** Characters of the prompt's text (tool definitions included). */
  readonly chars: number;
  /** At least count(t).tokens for every tokenizer t, without counting (a cheap context-window pre-check). */
  readonly upper: number;
  #budget: number;
  readonly #boundChars: number;
  readonly #deferChars: number;
  #deferred: Map<Encoding, string[]> | null = null;
  // Keyed by encoding and family names only: no key of theirs is an Object.prototype property.
  readonly #exact: Partial<Record<Encoding, ExactCounts>> = {};
  /** count()'s results per encoding or estimate family. */
  readonly #memo: Partial<Record<Encoding | EstimateFamily, TokenCount>> = {};
  /** The images' tokens per image rule (images.ts), made on first use: most prompts have none. */
  #imageMemo: Map<ImageRule, number> | null = null;
  /** The images' expected tokens per image rule, less the family figure count() took them at. */
  #expectedMemo: Map<ImageRule, number> | null = null;

  constructor(parts: PromptParts, o: MeasureOptions) {
    this.parts = parts;
    let n = parts.tools.length;
    for (const m of parts.messages) n += m.texts.length;
    this.#texts = new Array<string>(n);
    this.#est = new Array<number>(n);
    this.#bytes = new Array<number>(n);
    this.#res = new Array<number>(n);
    this.#resOpenai = new Array<number>(n);
    this.#longRun = new Array<boolean>(n);
    let chars = 0, at = 0;
    for (const m of parts.messages) for (const s of m.texts) { this.#measure(at++, s); chars += s.length; }
    this.#toolsFrom = at;
    for (const s of parts.tools) { this.#measure(at++, s); chars += s.length; }
    this.chars = chars;
    // An exact count never exceeds the bytes, an estimate is its own figure: the larger of the two bounds both.
    let upper = MAX_FRAMING.perMessage * parts.messages.length + MAX_FRAMING.base + parts.toolTurns * TOOL_OVERHEAD + parts.imageSizes.length * MAX_IMAGE_TOKENS;
    for (let i = 0; i < this.#texts.length; i++) upper += Math.max(this.#est[i]!, this.#bytes[i]!) + (i < this.#toolsFrom ? 0 : TOOL_OVERHEAD);
    for (const d of parts.documents) upper += documentTokens(d);
    this.upper = upper;
    this.#budget = o.exactChars;
    this.#boundChars = o.boundChars;
    this.#deferChars = o.deferChars ?? Infinity;
  }

  /** Per encoding, the new texts bound() left uncounted (see MeasureOptions.deferChars). */
  get deferred(): ReadonlyMap<Encoding, readonly string[]> { return this.#deferred ?? NONE_DEFERRED; }

  #measure(at: number, s: string): void {
    const m = measureText(s);
    this.#texts[at] = s; this.#est[at] = m.est; this.#bytes[at] = m.bytes; this.#res[at] = m.res; this.#resOpenai[at] = m.resOpenai; this.#longRun[at] = m.longRun;
  }

  /** Counts `t`'s prompt tokens (exact texts within the budget); memoised per tokenizer. */
  count(t: TokenizerId): TokenCount {
    const key = t.kind === 'exact' ? t.encoding : t.family;
    return this.#memo[key] ??= this.#count(t);
  }

  /**
   * The count with the tightest ceiling available: texts an exact encoding could not afford under
   * count()'s budget are encoded now, within `boundChars` more (a hard cost limit needs the bound,
   * and a bytes ceiling is about 4x the tokens of English text). Estimate families gain nothing.
   */
  bound(t: TokenizerId): TokenCount {
    const c = this.count(t);
    if (t.kind !== 'exact' || c.exact) return c;
    const e = this.#exact[t.encoding];
    if (!e || e.counted === this.#texts.length) return c;
    const budget = Math.max(this.#budget, 0) + this.#boundChars;
    if (this.#deferChars !== Infinity) {
      const texts: string[] = [];
      this.#encode(t.encoding, e, budget, texts);
      let chars = 0;
      for (const s of texts) chars += s.length;
      if (chars > this.#deferChars) { (this.#deferred ??= new Map()).set(t.encoding, texts); return c; }
    }
    this.#budget = this.#encode(t.encoding, e, budget);
    this.#memo[t.encoding] = undefined;
    return this.count(t);
  }

  /**
   * The input tokens a budget reservation prices the prompt at for `t`: texts counted exactly where the
   * encoding and count()'s character budget allow, the others at their estimate times ESTIMATE_MARGIN
   * for an OpenAI encoding (measured against it) and with the margins of their character classes for
   * the other families (estimate.ts reserveTextTokens), never above their byte ceiling; framing,
   * tool definitions and tool turns at their ceilings, every
   * image by the target model's rule (images.ts: at the size read from an inline image's header, else
   * the most the model bills for one; the family's ceiling without a rule), a binary document at its
   * base64 size / 4 with the margin (not a bound: nothing bounds one but the context window).
   * `estimateOnly`: no exact count even where one is cached, and no encoding loaded (the worker pool's
   * threads, src/workers/prompt-read.ts, load none: 0.4-0.6 s and tens of MB each).
   */
  reserve(t: TokenizerId, images: ImageRule = familyImageRule(t.kind === 'exact' ? 'openai' : t.family), estimateOnly = false): number {
    const p = this.parts;
    const family: Family = t.kind === 'exact' ? 'openai' : t.family;
    const e = t.kind === 'exact' && !estimateOnly ? this.#exactOf(t.encoding) : null;
    const nMsg = p.messages.length;
    let n = family === 'openai' ? FRAMING.openai.base + FRAMING.openai.perMessage * nMsg : FRAMING_CEILING.base + FRAMING_CEILING.perMessage * nMsg;
    for (let i = 0; i < this.#texts.length; i++) {
      const x = e ? e.per[i]! : -1;
      // An OpenAI encoding's uncounted text: openaiReserve; the others' tokenizers are not public and
      // count more beyond English (estimate.ts CLASS_RESERVE).
      n += x >= 0 ? x : t.kind === 'exact' ? this.#resOpenai[i]! : this.#res[i]!;
      if (i >= this.#toolsFrom) n += TOOL_DEFINITION_EXTRA;
    }
    // A binary document has no bound but the context window (DOCUMENT_CEILING), which would reserve a
    // whole window for every PDF (a 200k window at a model's prices) and refuse it under any smaller
    // budget: it is taken at its base64 size / 4 with the margin, as the body's bytes / 4 took it.
    let docs = 0;
    for (const d of p.documents) docs += d;
    return n + this.imageTokens(images) + p.toolTurns * TOOL_TURN_EXTRA + Math.ceil((docs / 4) * ESTIMATE_MARGIN);
  }

  /** The most the prompt's images are billed under a model's image rule (images.ts): each at its size where its header gave one, else the rule's maximum; at its `detail` ("low" bills a tile model its base). */
  imageTokens(rule: ImageRule): number {
    if (this.parts.imageSizes.length === 0) return 0;
    let n = (this.#imageMemo ??= new Map()).get(rule);
    if (n === undefined) {
      n = 0;
      const { imageSizes, imageDetails } = this.parts;
      for (let i = 0; i < imageSizes.length; i++) n += imageTokens(rule, imageSizes[i] ?? null, imageDetails[i]);
      this.#imageMemo.set(rule, n);
    }
    return n;
  }

  /**
   * What a model's own image rule changes in count(t).tokens (the expected count, for ranking), which
   * takes every image at its family's figure for 1024x1024 (IMAGE_TOKENS): each image at its size where
   * its header gave one, else at the rule's figure for 1024x1024; 0 where the rule is a family's
   * fallback or there are no images. gpt-4o-mini bills a 1024x1024 image 25,501 tokens, not OpenAI's
   * family figure of 765 (gpt-4o's), so ranking it by the family figure took it for 33x cheaper.
   */
  expectedImageDelta(t: TokenizerId, rule: ImageRule): number {
    const p = this.parts;
    if (p.imageSizes.length === 0 || rule.typical === null) return 0;
    let d = (this.#expectedMemo ??= new Map()).get(rule);
    if (d === undefined) {
      const family = IMAGE_TOKENS[t.kind === 'exact' ? 'openai' : t.family];
      d = 0;
      for (let i = 0; i < p.imageSizes.length; i++) d += (expectedImageTokens(rule, p.imageSizes[i] ?? null, p.imageDetails[i]) ?? family) - family;
      this.#expectedMemo.set(rule, d);
    }
    return d;
  }

  /**
   * What a model's own image rule changes in count(t).ceiling, which takes every image at its family's
   * ceiling (count() is shared by every model of a tokenizer): add it for the model's bound. Never
   * positive for the rules of images.ts (none bills more than its family's ceiling); 0 without images.
   */
  imageCeilingDelta(t: TokenizerId, rule: ImageRule): number {
    const p = this.parts;
    return p.imageSizes.length === 0 ? 0 : this.imageTokens(rule) - p.imageSizes.length * IMAGE_CEILING[t.kind === 'exact' ? 'openai' : t.family];
  }

  /**
   * Encodes texts of `t`'s encoding that count() and reserve() took at their estimate, within
   * `boundChars` (as bound() does); true when any text was newly counted (a reservation then prices
   * tighter). Estimate families and an encoding still loading gain nothing.
   */
  countMore(t: TokenizerId): boolean {
    if (t.kind !== 'exact') return false;
    const before = this.#exact[t.encoding]?.counted ?? 0;
    this.bound(t);
    return (this.#exact[t.encoding]?.counted ?? 0) > before;
  }

  /** Exact counts of every text the budget affords (cached texts cost nothing), or null while the encoding loads. */
  #exactOf(enc: Encoding): ExactCounts | null {
    let e = this.#exact[enc];
    if (e) return e;
    if (!exactCounter(enc)) return null;
    e = { per: new Array<number>(this.#texts.length).fill(-1), counted: 0 };
    this.#exact[enc] = e;
    this.#budget = this.#encode(enc, e, this.#budget);
    return e;
  }

  /**
   * Counts the texts not counted yet: cached ones (free), the others in order while they fit in
   * `budget` characters; returns what is left of it. With `dry`, only lists the texts it would encode.
   */
  #encode(enc: Encoding, e: ExactCounts, budget: number, dry?: string[]): number {
    const f = exactCounter(enc)!;
    for (let i = 0; i < this.#texts.length; i++) {
      if (e.per[i]! >= 0) continue;
      const s = this.#texts[i]!;
      let n = f.cached(s);
      // A run of non-whitespace longer than MAX_EXACT_RUN is one BPE piece, quadratic to encode: estimated.
      if (n < 0 && s.length <= budget && !this.#longRun[i]) {
        budget -= s.length;
        if (dry) { dry.push(s); continue; }
        n = f.count(s);
      }
      if (n >= 0 && !dry) { e.per[i] = n; e.counted++; }
    }
    return budget;
  }

  #count(t: TokenizerId): TokenCount {
    const p = this.parts;
    const family: Family = t.kind === 'exact' ? 'openai' : t.family;
    const e = t.kind === 'exact' ? this.#exactOf(t.encoding) : null;
    const frame = FRAMING[family];
    const nMsg = p.messages.length;
    let text = frame.base + frame.perMessage * nMsg;
    // Framing is documented (exact) for OpenAI families, bounded for the others.
    let ceil = family === 'openai' ? text : FRAMING_CEILING.base + FRAMING_CEILING.perMessage * nMsg;
    let tools = 0;
    const n = this.#texts.length;
    for (let i = 0; i < n; i++) {
      const x = e ? e.per[i]! : -1;
      const tok = x >= 0 ? x : this.#est[i]!;
      if (i < this.#toolsFrom) { text += tok; ceil += x >= 0 ? x : textCeiling(this.#bytes[i]!); }
      else { tools += tok + TOOL_OVERHEAD; ceil += (x >= 0 ? x : this.#bytes[i]!) + TOOL_DEFINITION_EXTRA; }
    }
    let other = tools + p.toolTurns * TOOL_OVERHEAD + p.imageSizes.length * IMAGE_TOKENS[family];
    for (const d of p.documents) other += documentTokens(d);
    ceil += p.toolTurns * TOOL_TURN_EXTRA + p.imageSizes.length * IMAGE_CEILING[family] + (p.documents.length > 0 ? DOCUMENT_CEILING : 0);
    const tokens = text + other;
    const allText = e !== null && e.counted === n;
    const estimatedParts = other > 0;
    if (e && t.kind === 'exact') {
      const exact = allText && !estimatedParts;
      // 'estimate:size': the encoding is there but no text fitted the budget.
      const method = e.counted === 0 && n > 0 ? 'estimate:size' : exact ? t.encoding : `${t.encoding}+estimate`;
      return { tokens, exact, method, ceiling: exact ? tokens : Math.max(ceil, tokens) };
    }
    const method = t.kind === 'exact' ? 'estimate:generic' : `estimate:${t.family}`;
    return { tokens, exact: false, method, ceiling: Math.max(ceil, tokens) };
  }
}
