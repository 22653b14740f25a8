// Where a table cell's text may wrap (textCell in widgets.ts puts the breaks in; this part is DOM-free so
// the tests' type check does not pull in the browser's modules). A cell lets a word break only where it would overflow
// (overflow-wrap: break-word), so ordinary words stay whole ('member', 'otherai/model-16',
// '/v1/chat/completions'); a long word of stored text (a client's 10,000-character model name) gets a
// break opportunity (<wbr>) every few characters, so it still wraps inside a column of bounded width
// instead of stretching the table. (overflow-wrap: anywhere did both by making every character a break
// opportunity, and the table's layout then squeezed short words too: 'membe|r' in a 1360px window.)

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/**
 * `text` in pieces with a break opportunity between each: every run of non-space characters longer than
 * `over` is cut every `every` characters (whole graphemes: an emoji or an accented letter is never split).
 */
export function wordPieces(text: string, over = 24, every = 12): string[] {
  const pieces = [''];
  for (const run of text.split(/(\s+)/)) {
    if (run.length <= over || /^\s/.test(run)) { pieces[pieces.length - 1] += run; continue; }
    const g = [...graphemes.segment(run)].map((s) => s.segment);
    for (let i = 0; i < g.length; i += every) {
      if (i > 0) pieces.push('');
      pieces[pieces.length - 1] += g.slice(i, i + every).join('');
    }
  }
  return pieces;
}
