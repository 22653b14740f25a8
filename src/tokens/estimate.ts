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

export function estimateShape(s: TextShape, k: Readonly<Record<keyof TextShape, number>> = COEFFICIENTS): number {
  return s.words * k.words + s.longTail * k.longTail + s.digits * k.digits + s.punct * k.punct + s.newlines * k.newlines
    + s.extraSpaces * k.extraSpaces + s.nonAsciiAlpha * k.nonAsciiAlpha + s.wide * k.wide;
}

/** Estimated tokens of one text (0 for ''). */
export function estimateTextTokens(s: string): number {
  return s.length === 0 ? 0 : Math.max(1, Math.round(estimateShape(textShape(s))));
}

/**
 * estimateTextTokens a slice at a time, awaiting `pause` between slices. The same figure: the slices
 * are cut before a space between two letters (src/tokens/slices.ts), where textShape's state (a
 * letter run ends, no space before) is what a fresh scan starts with, so the counts add up.
 */
export async function estimateTextTokensSliced(s: string, size: number, pause: () => Promise<void>): Promise<number> {
  if (s.length <= size) return estimateTextTokens(s);
  const sum: TextShape = { words: 0, longTail: 0, digits: 0, punct: 0, newlines: 0, extraSpaces: 0, nonAsciiAlpha: 0, wide: 0 };
  await eachSlice(s, size, pause, (part) => {
    const shape = textShape(part);
    for (const k of Object.keys(sum) as Array<keyof TextShape>) sum[k] += shape[k];
  });
  return Math.max(1, Math.round(estimateShape(sum)));
}
