// Long texts cut where both exact encodings (o200k_base, cl100k_base) start a new piece anyway, so
// that counting the slices one at a time, with the event loop free between them, gives exactly the
// count of the whole. The cut is made before a space that sits between two letters: the piece
// before it ends with the letter (no alternative of either pre-tokenizer pattern takes a space after
// a letter), and at the space both patterns start a piece of that space and the letters after it.
// No lookahead of either pattern reaches across it (the only one, `\s+(?!\S)`, looks at whitespace).
// test/tokens-slices.test.ts checks the sums against whole counts on random and adversarial text.

const LETTER = /\p{L}/u;

/** Whether a piece boundary lies before index i (s[i] a space between two letters). */
function cutBefore(s: string, i: number): boolean {
  return s.charCodeAt(i) === 0x20 && i > 0 && i + 1 < s.length && LETTER.test(s[i - 1]!) && LETTER.test(s[i + 1]!);
}

/**
 * End indices of slices of about `size` characters (the last is s.length). A slice grows past `size`
 * until the next cut; text without one (a long run without spaces) stays one slice.
 */
export function sliceEnds(s: string, size: number): number[] {
  const ends: number[] = [];
  let from = 0;
  while (s.length - from > size) {
    let at = from + size;
    while (at < s.length && !cutBefore(s, at)) at++;
    if (at >= s.length) break;
    ends.push(at);
    from = at;
  }
  ends.push(s.length);
  return ends;
}

/** Calls `each` on the slices of `s` in order, awaiting `pause()` between them (the caller yields the event loop there). */
export async function eachSlice(s: string, size: number, pause: () => Promise<void>, each: (part: string) => void): Promise<void> {
  let from = 0;
  for (const end of sliceEnds(s, size)) {
    if (from > 0) await pause();
    each(from === 0 && end === s.length ? s : s.slice(from, end));
    from = end;
  }
}

/** Counts `s` slice by slice with `count`. Exact: the sum equals count(s) (see the file comment). */
export async function countInSlices(s: string, size: number, count: (text: string) => number, pause: () => Promise<void>): Promise<number> {
  let total = 0;
  await eachSlice(s, size, pause, (part) => { total += count(part); });
  return total;
}
