// The one pass over a (bounded) slice of prompt text that feature extraction makes: words hashed
// into the vector (hashing.ts), keywords and character patterns collected as task-kind signals
// (kind.ts), option lines and question marks of the last turn's tail, lines and non-ASCII counted.
// Results accumulate in `scanned` across calls (one call per slice) until beginScan().
import { TextCache } from '../../util/text-cache.ts';
import { bump } from './hashing.ts';
import { FNV, KW_ROLE, KW_SIG, keyword, pairSignals, ROLE, SIG } from './kind.ts';

export const scanned = {
  /** Signal bits over everything scanned, and over the last turn's tail only. */
  all: 0, tail: 0,
  /** Option labels seen at line starts in the last turn's tail ("A) x", "(b) x", "3. x"): bit per label. */
  options: 0, questions: 0, lines: 0, nonAscii: 0,
};

export function beginScan(): void {
  scanned.all = 0; scanned.tail = 0; scanned.options = 0; scanned.questions = 0; scanned.lines = 0; scanned.nonAscii = 0;
}

/**
 * Counts of texts counted before (a conversation resends its earlier turns and its system prompt:
 * without this an agent's growing conversation was counted whole every request, ~0.35 ms of a 345 KB
 * one): per text, the range counted (the same on every resend: the head and tail sizes are fixed)
 * and lines * 2^26 + non-ASCII; bounded by the characters of the texts it holds.
 */
const COUNT_CACHE_MIN = 256;
const COUNT_CACHE_MAX_CHARS = 8_000_000;
const PACK = 2 ** 26;
const counted = new TextCache<[from: number, to: number, packed: number]>(COUNT_CACHE_MAX_CHARS);

/** Lines (newlines) and non-ASCII characters of text[from, to) without hashing it (an unscanned middle). */
export function countOnly(text: string, from: number, to: number): void {
  const cacheable = to - from >= COUNT_CACHE_MIN;
  if (cacheable) {
    const hit = counted.get(text);
    if (hit !== undefined && hit[0] === from && hit[1] === to) { scanned.lines += Math.floor(hit[2] / PACK); scanned.nonAscii += hit[2] % PACK; return; }
  }
  let lines = 0, non = 0;
  // Native searches first (a long middle is mostly ASCII): 2-4x faster than a loop over every character.
  for (let i = text.indexOf('\n', from); i >= 0 && i < to; i = text.indexOf('\n', i + 1)) lines++;
  if (NON_ASCII.test(from === 0 && to === text.length ? text : text.slice(from, to))) {
    for (let i = from; i < to; i++) if (text.charCodeAt(i) > 127) non++;
  }
  scanned.lines += lines; scanned.nonAscii += non;
  if (cacheable && lines < PACK && non < PACK) counted.set(text, [from, to, lines * PACK + non]);
}
const NON_ASCII = /[^\x00-\x7f]/;

/** CJK and Hangul characters: each one is a word (these scripts are written without spaces). */
const isIdeograph = (c: number) => (c >= 0x2e80 && c <= 0x9fff) || (c >= 0xac00 && c <= 0xd7af) || (c >= 0xf900 && c <= 0xfaff);

// Word state of the current scan (module-level so endWord stays a small top-level function).
let h = 0, prev = 0, digits = true, len = 0, before = 0, prevRole = 0, ns = 0, tailWeight = 1, bigrams = false;

/** Ends the current word: hashed (and its bigram) into the vector; a keyword adds its signals. */
function endWord(inTail: boolean, next: number): void {
  if (digits) h = Math.imul(FNV ^ (len << 8), 16777619) ^ 0x5bd1e995;
  bump(h, ns, inTail ? tailWeight : 1);
  if (bigrams && prev !== 0) bump(Math.imul(prev ^ 0x27d4eb2d, 31) ^ h, ns, 1);
  prev = h;
  const s = digits || len > 12 ? -1 : keyword(h);
  if (s < 0) { prevRole = 0; return; }
  const role = KW_ROLE[s]!;
  let sig = KW_SIG[s]! | pairSignals(prevRole, role);
  if (role & ROLE.latexName && before === 92) sig |= SIG.latex;
  if ((role & ROLE.print && next === 40) || (role & ROLE.include && before === 35)) sig |= SIG.api;
  scanned.all |= sig;
  if (inTail) scanned.tail |= sig;
  prevRole = role & ROLE.skip ? prevRole | role : role;
}

/** ASCII character classes: word characters (with their lower-case code), blanks, the rest. */
const WORD = 1, BLANK = 2;
const CLASS = new Uint8Array(128);
const LOWER = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const l = c >= 65 && c <= 90 ? c + 32 : c;
  LOWER[c] = l;
  CLASS[c] = (l >= 97 && l <= 122) || (l >= 48 && l <= 57) || l === 95 ? WORD : c === 32 || c === 9 || c === 13 ? BLANK : 0;
}

const isBlank = (c: number) => c === 32 || c === 9 || c === 13;
const isLabel = (c: number) => (c >= 97 && c <= 104) || (c >= 49 && c <= 56);
const isOp = (c: number) => c === 43 || c === 45 || c === 42 || c === 47 || c === 94 || c === 61 || c === 60 || c === 62 || c === 215 || c === 247;

/** After a digit run ending at `end`: blanks, one operator, blanks, a digit (\d\s*[-+*\/^×÷=<>]\s*\d)? */
function arithAfter(text: string, end: number, to: number): boolean {
  let j = end;
  while (j < to && isBlank(text.charCodeAt(j))) j++;
  if (j >= to || !isOp(text.charCodeAt(j))) return false;
  j++;
  while (j < to && isBlank(text.charCodeAt(j))) j++;
  const d = j < to ? text.charCodeAt(j) : 0;
  return d >= 48 && d <= 57;
}

/** A one-character label at a line start ("a", "(b", "3") followed by [).:], blanks and more text: its bit, else 0. */
function optionAt(text: string, label: number, end: number, to: number): number {
  const p = end < to ? text.charCodeAt(end) : 0;
  if (p !== 41 && p !== 46 && p !== 58) return 0;
  let j = end + 1;
  if (j >= to || !isBlank(text.charCodeAt(j))) return 0;
  while (j < to && isBlank(text.charCodeAt(j))) j++;
  if (j >= to || text.charCodeAt(j) === 10) return 0;
  return 1 << (label >= 97 ? label - 97 : label - 49 + 8);
}

/**
 * Scans text[from, to): word unigrams (and bigrams when `withBigrams`) into namespace `space`;
 * words starting at or after `tailFrom` count `tailCount` times (what is being asked weighs more
 * than a preamble), and option lines and question marks are counted there. ASCII letters are lower-cased; a digit run is one token
 * per length ("1234" ~ "5678"). Word characters take the inner loop; the rest is rarer.
 */
export function scan(text: string, from: number, to: number, space: number, withBigrams: boolean, tailFrom: number, tailCount: number): void {
  ns = space; tailWeight = tailCount; bigrams = withBigrams; prev = 0; prevRole = 0;
  let lines = 0, non = 0, all = 0;
  // Line state: still in its leading blanks (and how deep), where its first non-blank is.
  let atStart = true, lead = 0, first = from;
  let ticks = 0, dollar = -2, pc = 0;
  let i = from;
  while (i < to) {
    let c = text.charCodeAt(i);
    if (c < 128 ? CLASS[c] === WORD : !isIdeograph(c)) {
      const start = i;
      if (atStart) { atStart = false; first = i; if (lead >= 4) all |= SIG.indent; }
      let hh = FNV, dig = true;
      do {
        if (c < 128) c = LOWER[c]!; else non++;
        if (c > 57 || c < 48) dig = false;
        hh = Math.imul(hh ^ c, 16777619);
        c = ++i < to ? text.charCodeAt(i) : 10;
      } while (c < 128 ? CLASS[c] === WORD : !isIdeograph(c));
      h = hh; digits = dig; len = i - start; before = pc;
      endWord(start >= tailFrom, c);
      if (dig) { if (c === 37) all |= SIG.percent; else if (arithAfter(text, i, to)) all |= SIG.arith; }
      else if (len === 1 && start >= tailFrom) {
        const l = LOWER[text.charCodeAt(start)]!;
        if (isLabel(l) && (start === first || (start === first + 1 && text.charCodeAt(first) === 40))) scanned.options |= optionAt(text, l, i, to);
      }
      pc = 97; ticks = 0;
      continue;
    }
    i++;
    if (c === 10) {
      lines++;
      // The line just ended: a brace or semicolon last ({ } ;) is a code signal.
      let j = i - 2;
      while (j >= from && isBlank(text.charCodeAt(j))) j--;
      const l = j >= from ? text.charCodeAt(j) : 0;
      if (l === 123 || l === 125 || l === 59) all |= SIG.braceEol;
      atStart = true; lead = 0; dollar = -2; ticks = 0; pc = c;
      continue;
    }
    if (isBlank(c)) { if (atStart) lead += c === 9 ? 4 : 1; ticks = 0; pc = c; continue; }
    if (atStart) { atStart = false; first = i - 1; if (lead >= 4) all |= SIG.indent; }
    if (c > 127) {
      // An ideograph: a word of its own (bigrams join it to its neighbours).
      non++;
      h = Math.imul(FNV ^ c, 16777619); digits = false; len = 1; before = pc;
      endWord(i - 1 >= tailFrom, 0);
    } else if (c === 63) { if (i - 1 >= tailFrom) scanned.questions++; }
    else if (c === 96) { if (++ticks >= 3) all |= SIG.fence; pc = c; continue; }
    else if (c === 36) { if (dollar >= 0 && i - 1 - dollar > 1) all |= SIG.latex; dollar = i - 1; }
    else if ((c === 62 && (pc === 61 || pc === 45)) || (c === 58 && pc === 58) || (c === 43 && pc === 43) || (c === 61 && (pc === 33 || pc === 61))) all |= SIG.operator;
    ticks = 0; pc = c;
  }
  if (i > from) {
    let j = to - 1;
    while (j >= from && isBlank(text.charCodeAt(j))) j--;
    const l = j >= from ? text.charCodeAt(j) : 0;
    if (l === 123 || l === 125 || l === 59) all |= SIG.braceEol;
  }
  scanned.all |= all; scanned.lines += lines; scanned.nonAscii += non;
}
