// What an exact count costs before it is run. gpt-tokenizer (src/tokens/encoders.ts) runs BPE on each
// piece of the text, and a run of characters without whitespace (letters of one script, punctuation,
// emoji) is one piece whose BPE is quadratic in its length: one run of 16,384 random CJK characters
// took 0.4-0.7 s to count (cl100k_base / o200k_base), 65,536 took 6.4 s, all of it on the event loop.
// Such text is estimated or bounded instead of counted.

/** Whitespace as both encodings' pre-tokenizers split on it (space, tab, line breaks). */
const isSpace = (c: number): boolean => c === 32 || (c >= 9 && c <= 13);

/** Whether `s` holds a run of more than `max` characters without whitespace (a BPE piece that long or longer). */
export function hasRunOver(s: string, max: number): boolean {
  if (s.length <= max) return false;
  let run = 0;
  for (let i = 0; i < s.length; i++) {
    if (isSpace(s.charCodeAt(i))) run = 0;
    else if (++run > max) return true;
  }
  return false;
}

/**
 * What counting `s` exactly weighs in characters of the cheapest kind, or Infinity when a run of
 * non-whitespace is longer than `maxRun`. Digits and whitespace 1 (0.05-0.3 us each), ASCII punctuation
 * 2, ASCII letters 4 (random ones 1.5-2.8 us), anything beyond ASCII 32 (rare CJK up to ~15 us).
 */
export function exactWeight(s: string, maxRun: number): number {
  let units = 0, run = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (isSpace(c)) { run = 0; units++; continue; }
    if (++run > maxRun) return Infinity;
    units += c >= 48 && c <= 57 ? 1 : c >= 128 ? 32 : (c | 32) >= 97 && (c | 32) <= 122 ? 4 : 2;
  }
  return units;
}
