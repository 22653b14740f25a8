// What a routed request leaves for the store, encoded on the request's thread for the trip to the
// router's worker and finished there (rounded, serialised). A chunk of rows crosses as two byte
// buffers: text in UTF-8 and every row's numbers (the decision's figures and the feature vector, which
// JSON writes slowly) as a Float64Array. The text has two lines per row (JSON.stringify never writes a
// line break): the row's own fields and attempts as a JSON array, and the features without their
// vector, the JSON text the stored column splices in as it is (parsing it to write it again would give
// the same text); then a last line, the chunk's distinct strings (candidate ids, constraint names,
// ...), which the rows' numbers refer to by index. Rows are written into the buffers as they come, so
// what waits for the next flush lives outside the JS heap: when rows were kept as strings (and before
// that as objects) until the flush, every young-generation collection copied them and promoted them
// to the old one, and the chunk was then joined into one large string to be cloned. The buffers are
// shared memory (SharedArrayBuffer): a sealed chunk is never written again, so it crosses to the
// router's worker without being copied (cloning a 500-row chunk, ~650 KB, cost the event loop 0.2-0.6
// us per row and the worker as much again), and stays whole on this side for a retry after a failed
// write (a transferred buffer would be gone). The worker writes
// the stored texts from the chunk without building the recorded decision twice (readChunk,
// decision-text.ts); test/router-record.test.ts checks them against the objects' JSON,
// test/router-caches.test.ts against recordedDecision.
import type { AttemptRecord } from '../store/types.ts';
import type { Decision } from './decide.ts';
import { decisionText, featuresText, type TextReader } from './decision-text.ts';
import type { PromptFeatures } from './quality/index.ts';
import { RECORDED } from './settings.ts';
import type { DecisionRow, StoredDecision } from './store.ts';

/** Rows encoded together: `json` their text (UTF-8), two lines per row and the strings' line, `nums` their numbers in order. */
export type RowChunk = { rows: number; json: Uint8Array; nums: Float64Array };

/** The row's own fields (its features and decision are encoded beside them); `budgetDropped`: the plan's targets the key's budget left out (recorded as the decision's budget_dropped). */
export type RowHead = Omit<DecisionRow, 'features' | 'decision'> & { budgetDropped?: readonly string[] };

const num = (x: number | null): number => (x === null ? Number.NaN : x);

/** recordedDecision (src/router/explain.ts) written flat into `s` and `n`: the same candidates (`keep` per group), unrounded. */
export function packDecision(d: Decision, keep: number, s: Array<string | null>, n: number[]): void {
  const c = d.chosen;
  s.push(d.policy, d.kind, d.affinity, c?.id ?? null, c?.tokenMethod ?? null);
  n.push(num(d.w), d.stateVersion, d.explored ? 1 : 0, num(c ? c.q : null), num(c ? c.expectedCostUsd : null), num(c?.inputTokens ?? null), num(c?.outputTokens ?? null), d.candidates);
  n.push(d.plan.length);
  for (const t of d.plan) { s.push(t.candidate.id); n.push(num(t.maxOutputTokens ?? null)); }
  const by = Object.keys(d.excludedBy);
  n.push(by.length);
  for (const k of by) { s.push(k); n.push(d.excludedBy[k]!); }
  // Included: plan order first (as ranked); excluded grouped by constraint in order of first appearance.
  let nIncluded = 0;
  const groups = new Map<string, number[]>();
  const at: number[] = [];
  d.ranked.forEach((r, i) => {
    if (r.excluded) {
      if (keep === 0) return;
      const g = groups.get(r.excluded.constraint);
      if (!g) groups.set(r.excluded.constraint, [i]); else if (g.length < keep) g.push(i);
    } else if (nIncluded < keep) { nIncluded++; at.push(i); }
  });
  n.push(at.length);
  for (const i of at) { const r = d.ranked[i]!; s.push(r.id); n.push(r.q, r.expectedCostUsd, r.utility); }
  n.push(groups.size);
  for (const [k, list] of groups) {
    s.push(k); n.push(list.length);
    for (const i of list) { const r = d.ranked[i]!; s.push(r.id); n.push(r.expectedCostUsd, r.minCostUsd); }
  }
}

/** An upstream's error text a stored decision can hold: a NUL or a lone surrogate as U+FFFD. */
const jsonSafe = (s: string): string => (s.includes('\0') ? s.replaceAll('\0', '\uFFFD') : s).toWellFormed();

/**
 * The attempts as the stored decision holds them (`attempts` itself when nothing needs it, nearly always),
 * here and in recordedDecision (src/router/explain.ts), the reference this path writes the text of.
 * Their error is an upstream's text, which JSON writes with a NUL as \u0000 and a lone surrogate as \ud800:
 * PostgreSQL's json operators refuse both anywhere in a text they read (22P05, 22P02), and the router
 * overview reads the chosen model of each decision with feedback that way, so one such error was a 500
 * for every window holding it.
 */
export function storableAttempts(attempts: readonly AttemptRecord[]): readonly AttemptRecord[] {
  const bad = (e: string | null): boolean => e !== null && (e.includes('\0') || !e.isWellFormed());
  return attempts.some((a) => bad(a.error)) ? attempts.map((a) => (bad(a.error) ? { ...a, error: jsonSafe(a.error!) } : a)) : attempts;
}

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();

/** Typed arrays over shared memory: posted to a worker they are shared, not copied. */
const sharedBytes = (n: number): Uint8Array => new Uint8Array(new SharedArrayBuffer(n));
const sharedNums = (n: number): Float64Array => new Float64Array(new SharedArrayBuffer(n * Float64Array.BYTES_PER_ELEMENT));

/** One chunk of rows being encoded (the decision writer keeps a few, bounded). */
export class RowEncoder {
  #rows = 0;
  #json: Uint8Array;
  #len = 0;
  #nums: Float64Array;
  #n = 0;
  /**
   * The chunk's distinct strings (candidate ids, constraint names, ...), sent once: the rows refer to
   * them by index, so the worker serialises each once per chunk instead of once per row and place.
   */
  readonly #strings = new Map<string, number>();
  readonly #table: string[] = [];
  /** One row's decision strings and numbers, reused (packDecision writes plain arrays). */
  readonly #s: Array<string | null> = [];
  readonly #scratch: number[] = [];

  /**
   * `reuse`: a chunk whose rows are written and that nobody reads any more; its buffers, already at a
   * chunk's size and in memory, take this chunk's rows (new ones grow by doubling from 16 KB and 32 KB,
   * each step a fresh allocation the kernel maps in page by page, and a copy).
   */
  constructor(reuse?: RowChunk) {
    this.#json = reuse ? new Uint8Array(reuse.json.buffer) : sharedBytes(16_384);
    this.#nums = reuse ? new Float64Array(reuse.nums.buffer) : sharedNums(4_096);
  }

  get rows(): number { return this.#rows; }

  #room(n: number): void {
    if (this.#n + n <= this.#nums.length) return;
    const next = sharedNums(Math.max(this.#nums.length * 2, this.#n + n));
    next.set(this.#nums.subarray(0, this.#n));
    this.#nums = next;
  }

  #write(text: string): void {
    // A UTF-16 unit takes at most 3 bytes in UTF-8.
    const need = this.#len + text.length * 3;
    if (need > this.#json.length) {
      const next = sharedBytes(Math.max(this.#json.length * 2, need));
      next.set(this.#json.subarray(0, this.#len));
      this.#json = next;
    }
    this.#len += utf8.encodeInto(text, this.#json.subarray(this.#len)).written;
  }

  /** Rows' numbers: [decision numbers' count, packDecision's numbers, strings' count, their indexes (-1: null), features' count, idx, val]. */
  add(head: RowHead, features: PromptFeatures, d: Decision, attempts: readonly AttemptRecord[], keep = RECORDED): void {
    const s = this.#s;
    const n = this.#scratch;
    s.length = 0;
    n.length = 0;
    packDecision(d, keep, s, n);
    const { idx, val, ...meta } = features;
    this.#room(n.length + s.length + 3 + 2 * idx.length);
    const nums = this.#nums;
    let at = this.#n;
    nums[at++] = n.length;
    for (let i = 0; i < n.length; i++) nums[at++] = n[i]!;
    nums[at++] = s.length;
    for (let i = 0; i < s.length; i++) {
      const x = s[i]!;
      if (x === null) { nums[at++] = -1; continue; }
      let k = this.#strings.get(x);
      if (k === undefined) { k = this.#table.length; this.#strings.set(x, k); this.#table.push(x); }
      nums[at++] = k;
    }
    nums[at++] = idx.length;
    for (let i = 0; i < idx.length; i++) nums[at++] = idx[i]!;
    for (let i = 0; i < val.length; i++) nums[at++] = val[i]!;
    this.#n = at;
    this.#write(`${JSON.stringify([head.inferenceId, head.createdAt, head.keyId, head.servedModel, head.canonical, head.kind, head.status, head.costUsd, storableAttempts(attempts), head.budgetDropped ?? null])}\n${JSON.stringify(meta)}\n`);
    this.#rows++;
  }

  /**
   * The chunk (the strings' line last): views of this encoder's shared buffers, not copies (posted to
   * the worker, shared memory is shared whole, whatever its size). The encoder is done with then:
   * adding to it again would write into memory the chunk's reader may be reading.
   */
  seal(): RowChunk {
    this.#write(`${JSON.stringify(this.#table)}\n`);
    return { rows: this.#rows, json: this.#json.subarray(0, this.#len), nums: this.#nums.subarray(0, this.#n) };
  }
}

type Head = [inferenceId: string, createdAt: string, keyId: string | null, servedModel: string | null, canonical: string | null, kind: string, status: number, costUsd: string, attempts: AttemptRecord[], budgetDropped: string[] | null];

/** The rows of a chunk as the router's worker stores them: the columns' JSON text written from the packed values (decision-text.ts). */
export function readChunk(c: RowChunk): StoredDecision[] {
  const text = fromUtf8.decode(c.json);
  const nums = c.nums;
  const r: TextReader = { n: nums, ni: 0, si: 0, values: JSON.parse(text.slice(text.lastIndexOf('\n', text.length - 2) + 1)) as string[] };
  const out: StoredDecision[] = [];
  let at = 0;
  let ni = 0;
  for (let row = 0; row < c.rows; row++) {
    const e1 = text.indexOf('\n', at); const e2 = text.indexOf('\n', e1 + 1);
    const [inferenceId, createdAt, keyId, servedModel, canonical, kind, status, costUsd, attempts, budgetDropped] = JSON.parse(text.slice(at, e1)) as Head;
    const len = nums[ni++]!;
    const strings = ni + len;
    r.ni = ni; r.si = strings + 1;
    const { text: decision, fields: f } = decisionText(r, attempts, budgetDropped);
    ni = strings + 1 + nums[strings]!;
    const m = nums[ni++]!;
    const features = featuresText(text.slice(e1 + 1, e2), nums, ni, m);
    ni += 2 * m;
    at = e2 + 1;
    out.push({
      inferenceId, createdAt, keyId, servedModel, canonical, kind, status, costUsd, features, decision,
      chosen: f.chosen, quality: f.quality, predicted: f.predicted, explored: f.explored, affinity: f.affinity, attempts: f.attempts, version: f.version, excludedBy: f.excludedBy,
    });
  }
  return out;
}
