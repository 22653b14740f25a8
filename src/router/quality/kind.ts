// Task-kind detection and the code/math scores of PromptStats, from signals that the feature scan
// (scan.ts) collects as it hashes the words: keywords found by their word hash in a small table,
// word pairs ("how many", "write a poem"), and a few character patterns (fences, indentation,
// operators, option lines). No regular expression runs over the prompt: the cost is the scan's.
import type { TaskKind } from './types.ts';

/** Signal bits. Code and math bits count once each toward their score (4 distinct signals = 1). */
export const SIG = {
  // code
  fence: 1 << 0, indent: 1 << 1, codeWord: 1 << 2, braceEol: 1 << 3, operator: 1 << 4, api: 1 << 5,
  language: 1 << 6, codeTask: 1 << 7, codeError: 1 << 8,
  // math
  arith: 1 << 9, latex: 1 << 10, mathWord: 1 << 11, mathQuestion: 1 << 12, percent: 1 << 13,
  // the last turn's tail
  extract: 1 << 14, translate: 1 << 15, summarize: 1 << 16, writing: 1 << 17, reasoning: 1 << 18,
} as const;
const CODE_BITS = SIG.fence | SIG.indent | SIG.codeWord | SIG.braceEol | SIG.operator | SIG.api | SIG.language | SIG.codeTask | SIG.codeError;
const MATH_BITS = SIG.arith | SIG.latex | SIG.mathWord | SIG.mathQuestion | SIG.percent;

/** Keyword roles: a word sets `sig` bits; pair roles combine with the word before (`skip` words: articles, "by", are passed over). */
export const ROLE = {
  skip: 1 << 0, codeVerb: 1 << 1, codeNoun: 1 << 2, how: 1 << 3, manyMuch: 1 << 4, the: 1 << 5,
  mathNoun: 1 << 6, into: 1 << 7, languageName: 1 << 8, writeVerb: 1 << 9, writeNoun: 1 << 10,
  latexName: 1 << 11, print: 1 << 12, include: 1 << 13, step: 1 << 14, key: 1 << 15, points: 1 << 16,
} as const;

type Entry = { sig?: number; role?: number };
const WORDS: Record<string, Entry> = {};
const put = (words: string, e: Entry) => { for (const w of words.split(' ')) WORDS[w] = { sig: (WORDS[w]?.sig ?? 0) | (e.sig ?? 0), role: (WORDS[w]?.role ?? 0) | (e.role ?? 0) }; };
put('def class return import function const let var public static void fn func lambda elif struct impl', { sig: SIG.codeWord });
put('python javascript typescript java rust golang sql regex bash html css cpp kotlin', { sig: SIG.language });
put('console println printf stdout stderr', { sig: SIG.api });
put('compile compiler exception bug traceback stacktrace segfault unittest', { sig: SIG.codeError });
put('solve equation integral derivative calculate compute probability polynomial prime remainder theorem prove', { sig: SIG.mathWord });
put('extract parse json field fields', { sig: SIG.extract });
put('translate translation', { sig: SIG.translate });
put('summarize summarise summary tldr', { sig: SIG.summarize });
put('why explain reason justify compare analyze analyse', { sig: SIG.reasoning });
put('a an the me by', { role: ROLE.skip });
put('the', { role: ROLE.the });
put('write implement fix debug refactor', { role: ROLE.codeVerb });
put('function program script method class code query', { role: ROLE.codeNoun });
put('how', { role: ROLE.how });
put('many much', { role: ROLE.manyMuch });
put('sum product value area volume', { role: ROLE.mathNoun });
put('into', { role: ROLE.into });
put('english french german spanish chinese japanese', { role: ROLE.languageName });
put('write draft compose', { role: ROLE.writeVerb });
put('story poem essay email letter blog post article song speech tweet review', { role: ROLE.writeNoun });
put('frac sqrt sum int cdot times pi theta', { role: ROLE.latexName });
put('print', { role: ROLE.print });
put('include', { role: ROLE.include });
put('step', { role: ROLE.step });
put('key', { role: ROLE.key });
put('points', { role: ROLE.points });

/** FNV-1a offset basis as a signed 32-bit integer, and the hash of a lower-case ASCII word (as scan.ts computes it). */
export const FNV = 2166136261 | 0;
export function wordHash(w: string): number {
  let h = FNV;
  for (let i = 0; i < w.length; i++) h = Math.imul(h ^ w.charCodeAt(i), 16777619);
  return h;
}

// Open-addressing table: word hash -> (sig, role). A false hit needs a 32-bit hash collision.
const SIZE = 512;
export const KW_KEYS = new Int32Array(SIZE);
export const KW_SIG = new Int32Array(SIZE);
export const KW_ROLE = new Int32Array(SIZE);
const KW_USED = new Uint8Array(SIZE);
for (const [w, e] of Object.entries(WORDS)) {
  const h = wordHash(w);
  let s = (h >>> 0) & (SIZE - 1);
  while (KW_USED[s] === 1 && KW_KEYS[s] !== h) s = (s + 1) & (SIZE - 1);
  KW_USED[s] = 1; KW_KEYS[s] = h; KW_SIG[s] |= e.sig ?? 0; KW_ROLE[s] |= e.role ?? 0;
}
/** Slot of a word hash in the keyword table, or -1. */
export function keyword(h: number): number {
  let s = (h >>> 0) & (SIZE - 1);
  while (KW_USED[s] === 1) { if (KW_KEYS[s] === h) return s; s = (s + 1) & (SIZE - 1); }
  return -1;
}

/** Signal bits for a keyword `role` following a word of role `prev` (pairs: "how many", "write a poem"). */
export function pairSignals(prev: number, role: number): number {
  let s = 0;
  if (prev & ROLE.codeVerb && role & ROLE.codeNoun) s |= SIG.codeTask;
  if (prev & ROLE.how && role & ROLE.manyMuch) s |= SIG.mathQuestion;
  if (prev & ROLE.the && role & ROLE.mathNoun) s |= SIG.mathQuestion;
  if (prev & ROLE.into && role & ROLE.languageName) s |= SIG.translate;
  if (prev & ROLE.writeVerb && role & ROLE.writeNoun) s |= SIG.writing;
  if (prev & ROLE.step && role & ROLE.step) s |= SIG.reasoning; // "step by step" ("by" is no keyword)
  if (prev & ROLE.key && role & ROLE.points) s |= SIG.summarize;
  return s;
}

const popcount = (x: number) => { let n = 0; for (; x; x &= x - 1) n++; return n; };
/** Two distinct signals make a kind likely, four make it certain. */
export const codeScore = (sig: number) => Math.min(1, popcount(sig & CODE_BITS) / 4);
export const mathScore = (sig: number) => Math.min(1, popcount(sig & MATH_BITS) / 4);

export type KindInput = { all: number; tail: number; choices: number; tailChars: number; tools: number; images: number; json: boolean };

/** The detected kind, most specific first: capabilities the request needs, then content. */
export function detectKind(s: KindInput): TaskKind {
  if (s.tools > 0) return 'tool_use';
  if (s.images > 0) return 'vision';
  const code = codeScore(s.all), math = mathScore(s.all);
  if (code >= 0.5 && code >= math) return 'code';
  if (math >= 0.5) return 'math';
  if (s.choices >= 2) return 'multiple_choice';
  if (s.json || s.tail & SIG.extract) return 'extraction';
  if (s.tail & SIG.translate) return 'translation';
  if (s.tail & SIG.summarize) return 'summarization';
  if (s.tail & SIG.writing) return 'writing';
  if (code >= 0.25) return 'code';
  if (math >= 0.25) return 'math';
  if (s.tail & SIG.reasoning && s.tailChars > 200) return 'reasoning';
  return 'chat';
}
