// What a routed request leaves for the store, encoded on the request's thread for the trip to the
// router's worker and finished there (rebuilt, rounded, serialised). A chunk of rows crosses as two
// byte buffers: the rows' strings and small objects as one JSON array in UTF-8 (JSON writes them
// fast), and every row's numbers (the decision's figures and the feature vector, which JSON writes
// slowly) as a Float64Array. Rows are written into the buffers as they come, so what waits for the
// next flush lives outside the JS heap: when rows were kept as strings (and before that as objects)
// until the flush, every young-generation collection copied them and promoted them to the old one,
// and the chunk was then joined into one large string to be cloned. test/router-caches.test.ts
// checks that decoding gives recordedDecision and the features back.
import type { AttemptRecord } from '../store/types.ts';
import type { Decision } from './decide.ts';
import { RECORDED, roundRecorded, type RecordedDecision } from './explain.ts';
import type { PromptFeatures } from './quality/index.ts';
import type { DecisionRow } from './store.ts';

/** Rows encoded together: `json` is a JSON array (UTF-8) with one entry per row, `nums` their numbers in order. */
export type RowChunk = { rows: number; json: Uint8Array; nums: Float64Array };

/** The row's own fields; its features and decision are encoded beside them. */
export type RowHead = Omit<DecisionRow, 'features' | 'decision'>;

const num = (x: number | null): number => (x === null ? Number.NaN : x);
const orNull = (x: number): number | null => (Number.isNaN(x) ? null : x);

/** recordedDecision (src/router/explain.ts) written flat into `s` and `n`: the same candidates, unrounded. */
export function packDecision(d: Decision, all: boolean, s: Array<string | null>, n: number[]): void {
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
      const g = groups.get(r.excluded.constraint);
      if (!g) groups.set(r.excluded.constraint, [i]); else if (all || g.length < RECORDED) g.push(i);
    } else if (all || nIncluded < RECORDED) { nIncluded++; at.push(i); }
  });
  n.push(at.length);
  for (const i of at) { const r = d.ranked[i]!; s.push(r.id); n.push(r.q, r.expectedCostUsd, r.utility); }
  n.push(groups.size);
  for (const [k, list] of groups) {
    s.push(k); n.push(list.length);
    for (const i of list) { const r = d.ranked[i]!; s.push(r.id); n.push(r.expectedCostUsd, r.minCostUsd); }
  }
}

/** A cursor over packed values. */
type Reader = { s: ReadonlyArray<string | null>; si: number; n: ArrayLike<number>; ni: number };

/** The recorded decision packDecision wrote at the reader's position (unrounded); advances the reader. */
export function unpackDecision(r: Reader, attempts: readonly AttemptRecord[]): RecordedDecision {
  const S = (): string | null => r.s[r.si++] ?? null;
  const Sx = (): string => r.s[r.si++] as string;
  const N = (): number => r.n[r.ni++]!;
  const [policy, kind, affinity, chosen, tokenMethod] = [S(), Sx(), S(), S(), S()];
  const w = orNull(N()), stateVersion = N(), explored = N() === 1, q = orNull(N()), cost = orNull(N()), input = orNull(N()), out = orNull(N()), candidates = N();
  const plan: RecordedDecision['plan'] = [];
  for (let k = N(); k > 0; k--) plan.push([Sx(), orNull(N())]);
  const excludedBy: Record<string, number> = {};
  for (let k = N(); k > 0; k--) { const name = Sx(); excludedBy[name] = N(); }
  const included: RecordedDecision['included'] = [];
  for (let k = N(); k > 0; k--) included.push([Sx(), N(), N(), N()]);
  const excluded: RecordedDecision['excluded'] = {};
  for (let k = N(); k > 0; k--) {
    const list: Array<[string, number, number]> = (excluded[Sx()] = []);
    for (let m = N(); m > 0; m--) list.push([Sx(), N(), N()]);
  }
  return {
    w, policy, state_version: stateVersion, kind, explored, affinity, chosen, chosen_quality: q, chosen_cost_usd: cost,
    input_tokens: input, token_method: tokenMethod, expected_output_tokens: out,
    plan, candidates, excluded_by: excludedBy, included, excluded, attempts,
  };
}

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();

/** One chunk of rows being encoded (the decision writer keeps a few, bounded). */
export class RowEncoder {
  #rows = 0;
  #json = new Uint8Array(16_384);
  #len = 1;
  #nums = new Float64Array(4_096);
  #n = 0;
  /** One row's decision numbers, reused (packDecision writes a plain array). */
  readonly #scratch: number[] = [];

  constructor() { this.#json[0] = 0x5b; /* [ */ }

  get rows(): number { return this.#rows; }

  #room(n: number): void {
    if (this.#n + n <= this.#nums.length) return;
    const next = new Float64Array(Math.max(this.#nums.length * 2, this.#n + n));
    next.set(this.#nums.subarray(0, this.#n));
    this.#nums = next;
  }

  add(head: RowHead, features: PromptFeatures, d: Decision, attempts: readonly AttemptRecord[], all: boolean): void {
    const s: Array<string | null> = [];
    const n = this.#scratch;
    n.length = 0;
    packDecision(d, all, s, n);
    const { idx, val, ...meta } = features;
    this.#room(n.length + 2 + 2 * idx.length);
    const nums = this.#nums;
    let at = this.#n;
    nums[at++] = n.length;
    for (let i = 0; i < n.length; i++) nums[at++] = n[i]!;
    nums[at++] = idx.length;
    for (let i = 0; i < idx.length; i++) nums[at++] = idx[i]!;
    for (let i = 0; i < val.length; i++) nums[at++] = val[i]!;
    this.#n = at;
    const text = JSON.stringify([head.inferenceId, head.createdAt, head.keyId, head.servedModel, head.canonical, head.kind, head.status, head.costUsd, meta, s, attempts]);
    // A UTF-16 unit takes at most 3 bytes in UTF-8; +1 for the separator.
    const need = this.#len + text.length * 3 + 2;
    if (need > this.#json.length) {
      const next = new Uint8Array(Math.max(this.#json.length * 2, need));
      next.set(this.#json.subarray(0, this.#len));
      this.#json = next;
    }
    if (this.#rows > 0) this.#json[this.#len++] = 0x2c; // ,
    this.#len += utf8.encodeInto(text, this.#json.subarray(this.#len)).written;
    this.#rows++;
  }

  /** The chunk, copied to buffers of its own size (a view would carry the whole buffer when cloned). */
  seal(): RowChunk {
    const json = new Uint8Array(this.#len + 1);
    json.set(this.#json.subarray(0, this.#len));
    json[this.#len] = 0x5d; // ]
    return { rows: this.#rows, json, nums: this.#nums.slice(0, this.#n) };
  }
}

/** The rows of a chunk as stored: features back as arrays, decisions rebuilt and rounded. */
export function decodeRows(c: RowChunk): DecisionRow[] {
  const rows = JSON.parse(fromUtf8.decode(c.json)) as Array<[string, string, string | null, string | null, string | null, string, number, string, Omit<PromptFeatures, 'idx' | 'val'>, Array<string | null>, AttemptRecord[]]>;
  const out: DecisionRow[] = [];
  let ni = 0;
  for (const [inferenceId, createdAt, keyId, servedModel, canonical, kind, status, costUsd, meta, s, attempts] of rows) {
    const len = c.nums[ni++]!;
    const r: Reader = { s, si: 0, n: c.nums, ni };
    const decision = roundRecorded(unpackDecision(r, attempts));
    ni += len;
    const m = c.nums[ni++]!;
    const idx = Array.from(c.nums.subarray(ni, ni + m));
    const val = Array.from(c.nums.subarray(ni + m, ni + 2 * m));
    ni += 2 * m;
    out.push({ inferenceId, createdAt, keyId, servedModel, canonical, kind, status, costUsd, features: { ...meta, idx, val } as PromptFeatures, decision });
  }
  return out;
}
