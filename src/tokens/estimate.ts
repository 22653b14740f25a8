// Prompt tokens of text for models without a tokenizer we can run: a linear estimate over character
// classes, fitted to o200k_base counts (bench/token-estimate.ts prints the fit and its error).
// Word-like runs cost about one token each, long words more, punctuation, digits and other
// scripts roughly one token per one or two characters: chars / 4 misses code and non-Latin text by 2-3x.
import { eachSlice } from './slices.ts';

/** Character-class counts of a text; one pass, no allocation. */
export type TextShape = {
  /** Runs of ASCII letters. */
  words: number;
  /** Letters beyond the sixth of each run (long words split). */
  longTail: number;
  digits: number;
  /** ASCII punctuation and symbols. */
  punct: number;
  /** Line breaks. */
  newlines: number;
  /** Spaces/tabs beyond the first of a run (indentation). */
  extraSpaces: number;
  /** Non-ASCII code units in Latin/Greek/Cyrillic ranges (accented letters and such). */
  nonAsciiAlpha: number;
  /** Other non-ASCII code units (CJK, emoji halves, symbols). */
  wide: number;
};

export function textShape(s: string): TextShape {
  let words = 0, longTail = 0, digits = 0, punct = 0, newlines = 0, extraSpaces = 0, nonAsciiAlpha = 0, wide = 0;
  let run = 0;
  let prevSpace = false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const letter = (c >= 97 && c <= 122) || (c >= 65 && c <= 90);
    if (letter) {
      if (run === 0) words++;
      else if (run >= 6) longTail++;
      run++;
      prevSpace = false;
      continue;
    }
    run = 0;
    if (c === 32 || c === 9) { if (prevSpace) extraSpaces++; prevSpace = true; continue; }
    prevSpace = false;
    if (c === 10) newlines++;
    else if (c === 13) continue;
    else if (c >= 48 && c <= 57) digits++;
    else if (c < 128) punct++;
    else if (c < 0x0530) nonAsciiAlpha++;
    else wide++;
  }
  return { words, longTail, digits, punct, newlines, extraSpaces, nonAsciiAlpha, wide };
}

/**
 * Coefficients per class, fitted by least squares to o200k_base counts on a mixed sample (English
 * prose and docs, TypeScript, benchmark prompts, TypeScript's diagnostics in 13 languages); see
 * bench/token-estimate.ts for the sample, the fit and the held-out error. Held out (210 texts):
 * mean error -0.1%, median |error| 4.1%, p90 14.6%, worst under-count -24.8% (CJK); chars/4 on
 * the same texts: median 5.8%, p90 58%, worst -71% (CJK).
 */
export const COEFFICIENTS: Readonly<Record<keyof TextShape, number>> = {
  words: 0.936, longTail: 0.275, digits: 1.467, punct: 0.453, newlines: 1.342, extraSpaces: 0.069, nonAsciiAlpha: 0.259, wide: 0.734,
};

/**
 * What a budget reservation multiplies an estimate by (src/tokens/measure.ts reserve): 1 / (1 - 0.265),
 * the worst under-count bench/token-estimate.ts measured of these coefficients against o200k_base
 * over its whole sample (1,195 texts: -24.7% held out, -26.5% for a fresh fit; non-Latin scripts and
 * code). A measured bound, not a proof: tokenizers that are not public (Claude's, Gemini's) are not in it.
 */
export const ESTIMATE_MARGIN = 1.36;

/**
 * The reservation's figures for text beyond English, where tokenizers that are not public count more
 * than ESTIMATE_MARGIN covers (Claude 2's public tokenizer, the only Claude one published: reserved/real
 * down to 0.70 on emoji, 0.71 on other languages, 0.78 on CJK with the margin alone). `latinMargin`:
 * the margin on the ASCII classes' estimate of a text holding accented, Greek or Cyrillic letters (a
 * language other than English: its words split into more tokens than English ones); `nonAsciiAlpha`
 * and `wide`: tokens per code unit of those classes (the estimate takes 0.259 and 0.734). Fitted with
 * bench/reservation-margin.ts's search as the least reservation that covers both o200k_base and
 * Claude 2 on every text of its sample (1,238 texts: docs, code, prompts, 13 languages, 20 emoji
 * texts; 1.91, 0.5, 1.42); fitted on three quarters, the held-out quarter's reserved/real was at least
 * 1.02. `nonAsciiAlpha` raised to 0.6: a Russian sentence outside the sample took 0.55 a letter
 * (test/budget-reservation-estimate.test.ts). A measured bound, not a proof: the tokenizers of current
 * Claude models are not public.
 */
export const CLASS_RESERVE = { latinMargin: 1.91, nonAsciiAlpha: 0.6, wide: 1.42 } as const;

/**
 * Tokens a budget reservation takes a text of `shape` and `bytes` UTF-8 bytes at: the ASCII classes'
 * estimate times ESTIMATE_MARGIN (CLASS_RESERVE.latinMargin in a text with accented, Greek or Cyrillic
 * letters), the other classes at their CLASS_RESERVE figures; never above the bytes ceiling (+1).
 */
export function reserveTextTokens(shape: TextShape, bytes: number): number {
  const k = COEFFICIENTS;
  const ascii = shape.words * k.words + shape.longTail * k.longTail + shape.digits * k.digits + shape.punct * k.punct + shape.newlines * k.newlines
    + shape.extraSpaces * k.extraSpaces;
  const n = ascii * (shape.nonAsciiAlpha > 0 ? CLASS_RESERVE.latinMargin : ESTIMATE_MARGIN)
    + shape.nonAsciiAlpha * CLASS_RESERVE.nonAsciiAlpha + shape.wide * CLASS_RESERVE.wide;
  return Math.min(Math.ceil(n), bytes === 0 ? 0 : bytes + 1);
}

export function estimateShape(s: TextShape, k: Readonly<Record<keyof TextShape, number>> = COEFFICIENTS): number {
  return s.words * k.words + s.longTail * k.longTail + s.digits * k.digits + s.punct * k.punct + s.newlines * k.newlines
    + s.extraSpaces * k.extraSpaces + s.nonAsciiAlpha * k.nonAsciiAlpha + s.wide * k.wide;
}

/** Estimated tokens of one text (0 for ''). */
export function estimateTextTokens(s: string): number {
  return s.length === 0 ? 0 : Math.max(1, Math.round(estimateShape(textShape(s))));
}

/**
 * textShape a slice at a time, awaiting `pause` between slices. The same counts: the slices are cut
 * before a space between two letters (src/tokens/slices.ts), where textShape's state (a letter run
 * ends, no space before) is what a fresh scan starts with, so the counts add up.
 */
export async function textShapeSliced(s: string, size: number, pause: () => Promise<void>): Promise<TextShape> {
  if (s.length <= size) return textShape(s);
  const sum: TextShape = { words: 0, longTail: 0, digits: 0, punct: 0, newlines: 0, extraSpaces: 0, nonAsciiAlpha: 0, wide: 0 };
  await eachSlice(s, size, pause, (part) => {
    const shape = textShape(part);
    for (const k of Object.keys(sum) as Array<keyof TextShape>) sum[k] += shape[k];
  });
  return sum;
}
