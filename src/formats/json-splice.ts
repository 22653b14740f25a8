// Replaces string members of a JSON object's top level in its text, leaving every other byte as the
// upstream wrote it: re-serialising a whole response to change two fields cost more than parsing it.

const isSpace = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** Nesting depth just before `end` (0 outside the top-level value), or -1 when `end` is inside a string. */
function depthAt(text: string, end: number): number {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < end; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) depth--;
  }
  return inString ? -1 : depth;
}

/**
 * Where the value of the last top-level member `key` starts and ends, when that value is the string
 * `value` serialised exactly as JSON.stringify would; null otherwise. The last occurrence is the one
 * JSON.parse keeps, so it is the one that must change.
 */
function findMember(text: string, key: string, value: string): [number, number] | null {
  const name = `"${key}"`;
  const encoded = JSON.stringify(value);
  for (let i = text.lastIndexOf(name); i >= 0; i = i === 0 ? -1 : text.lastIndexOf(name, i - 1)) {
    let j = i + name.length;
    while (j < text.length && isSpace(text.charCodeAt(j))) j++;
    if (text.charCodeAt(j) !== 0x3a) continue;
    j++;
    while (j < text.length && isSpace(text.charCodeAt(j))) j++;
    if (!text.startsWith(encoded, j)) continue;
    if (depthAt(text, i) === 1) return [j, j + encoded.length];
  }
  return null;
}

/**
 * `text` (a JSON object that parsed) with each top-level member `key` whose string value is `from`
 * set to `to`; null when a member is missing or written differently (the caller then re-serialises).
 */
export function replaceTopLevelStrings(text: string, edits: ReadonlyArray<readonly [key: string, from: unknown, to: string]>): string | null {
  const spans: Array<[number, number, string]> = [];
  for (const [key, from, to] of edits) {
    if (typeof from !== 'string') return null;
    const at = findMember(text, key, from);
    if (!at) return null;
    spans.push([at[0], at[1], JSON.stringify(to)]);
  }
  spans.sort((a, b) => a[0] - b[0]);
  let out = '';
  let pos = 0;
  for (const [start, end, repl] of spans) {
    if (start < pos) return null;
    out += text.slice(pos, start) + repl;
    pos = end;
  }
  return out + text.slice(pos);
}
