// Rollup arithmetic without I/O: the hour cells a batch of inserted records adds up to, their compact
// journal encoding, exact integer money, and the expansion of hour cells into every grain and the day
// span that the dashboard reads (src/store/rollup-write.ts and rollup-fold.ts do the writing).
import { addDecimal, formatDecimal } from '../catalog/decimal.ts';
import { LATENCY_BOUNDS_MS, USAGE_SUM_COLUMNS } from './dashboard-schema.ts';
import type { FeedbackRow, InferenceRecord } from './types.ts';

export type Span = 'h' | 'd';
/** Which dimensions a rollup row keeps; the others hold ''. 'cell' keeps all four. */
export type Grain = 'total' | 'key' | 'model' | 'provider' | 'route' | 'cell';

/**
 * Exact money as integers: value = hi * 1e-6 + lo * 1e-18 + rest, hi and lo with the value's sign and
 * |lo| < 1e12, rest the digits past the 18th decimal (null nearly always: only prices with more than 18
 * decimals, a handful in the catalog, leave any). Integer sums are exact and native in both databases.
 */
export type Money = { hi: number; lo: number; rest: string | null };
const LO_UNIT = 1e12;
const ZEROS18 = '0'.repeat(18);

/** A decimal string as Money. */
export function splitMoney(s: string): Money {
  const neg = s.startsWith('-');
  const body = neg ? s.slice(1) : s;
  const dot = body.indexOf('.');
  const int = dot < 0 ? body : body.slice(0, dot);
  const frac = dot < 0 ? '' : body.slice(dot + 1);
  const f18 = frac.length >= 18 ? frac.slice(0, 18) : (frac + ZEROS18).slice(0, 18);
  const hi = Number(int) * 1e6 + Number(f18.slice(0, 6));
  // Beyond 9e9 USD (no real bill): the whole amount rides in the exact decimal part, so no record is refused for it.
  if (!Number.isSafeInteger(hi)) return { hi: 0, lo: 0, rest: s };
  const sign = neg ? -1 : 1;
  const rest = frac.length > 18 && /[1-9]/.test(frac.slice(18)) ? `${neg ? '-' : ''}0.${ZEROS18}${frac.slice(18)}` : null;
  return { hi: sign * hi || 0, lo: sign * Number(f18.slice(6)) || 0, rest };
}

/** a += b, carrying lo into hi so |lo| stays below 1e12 (what the SQL upserts do too). */
export function addMoney(a: Money, b: Money): void {
  const hi = a.hi + b.hi;
  if (!Number.isSafeInteger(hi)) {
    // Past 2^53 millionths (9e9 USD) in one cell: the sum moves into the exact decimal part.
    a.rest = [a, b].reduce((acc, m) => addDecimal(acc, joinMoney(m.hi, m.lo, m.rest)), '0');
    a.hi = 0; a.lo = 0;
    return;
  }
  a.hi = hi;
  a.lo += b.lo;
  if (a.lo >= LO_UNIT || a.lo <= -LO_UNIT) { const c = Math.trunc(a.lo / LO_UNIT); a.hi += c; a.lo -= c * LO_UNIT; }
  if (b.rest !== null) a.rest = a.rest === null ? b.rest : addDecimal(a.rest, b.rest);
}

const P18 = 10n ** 18n;
/** The exact decimal string of summed parts as the databases return them (numbers, bigints or digit strings). */
export function joinMoney(hi: unknown, lo: unknown, rest: unknown): string {
  const big = (v: unknown): bigint => (v === null || v === undefined || v === '' ? 0n : typeof v === 'bigint' ? v : BigInt(typeof v === 'number' ? Math.trunc(v) : String(v)));
  const atto = big(hi) * 1_000_000_000_000n + big(lo);
  const neg = atto < 0n;
  const abs = neg ? -atto : atto;
  const text = `${neg ? '-' : ''}${abs / P18}.${(abs % P18).toString().padStart(18, '0')}`;
  return rest === null || rest === undefined || rest === '' ? formatDecimal(text) : addDecimal(text, String(rest));
}

/** Index of the histogram bucket of `ms`, or -1 (negative: counted in none, as the SQL it replaced did). */
export function bucketOf(ms: number): number {
  if (!(ms >= 0)) return -1;
  let i = 0;
  while (i < LATENCY_BOUNDS_MS.length && ms >= LATENCY_BOUNDS_MS[i]!) i++;
  return i;
}

/** Positions in a cell's vector: the order of USAGE_SUM_COLUMNS. */
const V = Object.fromEntries(USAGE_SUM_COLUMNS.map((c, i) => [c, i])) as Record<(typeof USAGE_SUM_COLUMNS)[number], number>;
export const VECTOR_LENGTH = USAGE_SUM_COLUMNS.length;

/** One rollup row: a time (hour or day start, ISO), the four dimensions ('' where the grain drops one) and the sums. */
export type UsageCell = {
  span: Span; grain: Grain; t: string; keyId: string; model: string; provider: string; route: string;
  v: number[]; money: Money;
};

const HOUR = 3_600_000;
const DAY = 86_400_000;
/** The UTC midnight starting the day of an ISO time. */
export const dayOf = (iso: string): string => new Date(Math.floor(Date.parse(iso) / DAY) * DAY).toISOString();

/** Text as the store keeps it (PostgreSQL cannot hold NUL: the stores write U+FFFD, so the rollups do too). */
export type TextOf = (s: string) => string;
export const sameText: TextOf = (s) => s;
export const pgText: TextOf = (s) => (s.includes('\0') ? s.replaceAll('\0', '\uFFFD') : s);

/** An unambiguous map key (lengths first, so no separator can be forged by a value). */
const keyOf = (a: string, b: string, c: string, d: string, e: string, f: string, g: string): string =>
  `${a.length}:${b.length}:${c.length}:${d.length}:${e.length}:${f.length}:${g.length}:${a}${b}${c}${d}${e}${f}${g}`;

/** The hour holding an ISO time: a slice for the canonical form the writer produces, else through Date. */
export const hourIsoOf = (iso: string): string => (iso.length === 24 && iso[10] === 'T' && iso[23] === 'Z'
  ? `${iso.slice(0, 13)}:00:00.000Z` : new Date(Math.floor(Date.parse(iso) / HOUR) * HOUR).toISOString());

function cellIn(map: Map<string, UsageCell>, span: Span, grain: Grain, t: string, k: string, m: string, p: string, r: string): UsageCell {
  const id = keyOf(span, grain, t, k, m, p, r);
  let c = map.get(id);
  if (c === undefined) {
    c = { span, grain, t, keyId: k, model: m, provider: p, route: r, v: new Array<number>(VECTOR_LENGTH).fill(0), money: { hi: 0, lo: 0, rest: null } };
    map.set(id, c);
  }
  return c;
}

/** The (hour, key, model, provider, route) cells of inserted records: one map lookup per record. */
export function hourCells(recs: readonly InferenceRecord[], text: TextOf = sameText): UsageCell[] {
  const map = new Map<string, UsageCell>();
  let lastCreated = '';
  let hourIso = '';
  for (const x of recs) {
    if (x.createdAt !== lastCreated) { lastCreated = x.createdAt; hourIso = hourIsoOf(x.createdAt); }
    const c = cellIn(map, 'h', 'cell', hourIso, text(x.keyId ?? ''), text(x.servedModel ?? x.requestedModel), text(x.provider ?? ''), text(x.route));
    const v = c.v;
    v[V.requests]!++;
    if (x.status >= 400) v[V.errors]!++;
    if (x.stream) v[V.stream_requests]!++;
    v[V.input_tokens]! += x.inputTokens; v[V.output_tokens]! += x.outputTokens; v[V.cache_read_tokens]! += x.cacheReadTokens;
    v[V.cache_write_tokens]! += x.cacheWriteTokens; v[V.reasoning_tokens]! += x.reasoningTokens;
    const lat = Math.round(x.latencyMs);
    v[V.latency_ms_sum]! += lat;
    const lb = bucketOf(lat);
    if (lb >= 0) v[V.lat_h0 + lb]!++;
    if (x.ttftMs !== null) {
      const ttft = Math.round(x.ttftMs);
      v[V.ttft_count]!++;
      v[V.ttft_ms_sum]! += ttft;
      const tb = bucketOf(ttft);
      if (tb >= 0) v[V.ttft_h0 + tb]!++;
    }
    addMoney(c.money, splitMoney(x.costUsd));
  }
  return [...map.values()];
}

/**
 * Hour cells as journal text: {s: the distinct strings, c: [[t, key, model, provider, route (indexes into s),
 * hi, lo, rest, [index, value, ...] of the non-zero sums]]}. Strings repeat across a batch's cells, so they
 * are written once: an entry is about half the size, and the journal row is what the write path pays for.
 */
export function encodeCells(cells: readonly UsageCell[]): string {
  const strings: string[] = [];
  const index = new Map<string, number>();
  const at = (x: string): number => { let i = index.get(x); if (i === undefined) { i = strings.length; strings.push(x); index.set(x, i); } return i; };
  const c = cells.map((x) => {
    const sparse: number[] = [];
    for (let i = 0; i < VECTOR_LENGTH; i++) if (x.v[i] !== 0) sparse.push(i, x.v[i]!);
    return [at(x.t), at(x.keyId), at(x.model), at(x.provider), at(x.route), x.money.hi, x.money.lo, x.money.rest, sparse];
  });
  return JSON.stringify({ s: strings, c });
}

type Encoded = { s: string[]; c: Array<[number, number, number, number, number, number, number, string | null, number[]]> };

/** A journal entry's hour cells merged into `into` (by cell). */
export function mergeEncoded(into: Map<string, UsageCell>, text: string): void {
  const { s, c } = JSON.parse(text) as Encoded;
  for (const [t, k, m, p, r, hi, lo, rest, sparse] of c) {
    const cell = cellIn(into, 'h', 'cell', s[t]!, s[k]!, s[m]!, s[p]!, s[r]!);
    for (let i = 0; i < sparse.length; i += 2) cell.v[sparse[i]!]! += sparse[i + 1]!;
    addMoney(cell.money, { hi, lo, rest });
  }
}

function addCell(into: UsageCell, from: UsageCell): void {
  for (let i = 0; i < VECTOR_LENGTH; i++) into.v[i]! += from.v[i]!;
  addMoney(into.money, from.money);
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
/** Primary-key order, so concurrent folds (PostgreSQL replicas) lock rows in the same order. */
const byKey = (a: UsageCell, b: UsageCell): number =>
  cmp(a.span, b.span) || cmp(a.grain, b.grain) || cmp(a.t, b.t) || cmp(a.keyId, b.keyId) || cmp(a.model, b.model) || cmp(a.provider, b.provider) || cmp(a.route, b.route);

/** Hour cells with the day cells and every projection (total, key, model, provider, route) at both spans, in key order. */
export function expandCells(hour: Iterable<UsageCell>): UsageCell[] {
  const all = new Map<string, UsageCell>();
  for (const c of hour) {
    const day = dayOf(c.t);
    addCell(cellIn(all, 'h', 'cell', c.t, c.keyId, c.model, c.provider, c.route), c);
    addCell(cellIn(all, 'd', 'cell', day, c.keyId, c.model, c.provider, c.route), c);
    for (const [span, t] of [['h', c.t], ['d', day]] as const) {
      addCell(cellIn(all, span, 'total', t, '', '', '', ''), c);
      addCell(cellIn(all, span, 'key', t, c.keyId, '', '', ''), c);
      addCell(cellIn(all, span, 'model', t, '', c.model, '', ''), c);
      addCell(cellIn(all, span, 'provider', t, '', '', c.provider, ''), c);
      addCell(cellIn(all, span, 'route', t, '', '', '', c.route), c);
    }
  }
  return [...all.values()].sort(byKey);
}

/** Feedback rollup rows: per hour and day, per (key, model) and per model alone. */
export type FeedbackCell = {
  span: Span; grain: 'cell' | 'model'; t: string; keyId: string; model: string; metric: string; type: string;
  count: number; sum: number; sumsq: number;
};

/** A feedback value in the mean: booleans as 1/0, floats as numbers, comments as nothing. */
export function feedbackValue(type: string, value: string): number | null {
  if (type === 'boolean') return value === 'true' ? 1 : value === 'false' ? 0 : null;
  if (type === 'float') { const n = Number(value); return Number.isFinite(n) ? n : null; }
  return null;
}

export type JoinedFeedback = { f: Pick<FeedbackRow, 'keyId' | 'metric' | 'type' | 'value' | 'createdAt'>; model: string };

/** A feedback row as read back from the database, with the served model of its inference. */
export const joinedOf = (r: Record<string, unknown>, model: string): JoinedFeedback => ({
  f: {
    keyId: r.key_id === null || r.key_id === undefined ? null : String(r.key_id), metric: String(r.metric), type: String(r.type) as FeedbackRow['type'],
    value: String(r.value), createdAt: r.created_at instanceof Date ? r.created_at.toISOString() : String(r.created_at),
  },
  model,
});

/** Feedback with the served model of its inference, as journal text: [hour, key, model, metric, type, count, sum, sumsq]. */
export function encodeFeedback(rows: readonly JoinedFeedback[], text: TextOf = sameText): string {
  const map = new Map<string, [string, string, string, string, string, number, number, number]>();
  for (const { f, model } of rows) {
    const row = [hourIsoOf(f.createdAt), text(f.keyId ?? ''), text(model), text(f.metric), f.type] as const;
    const id = keyOf('', '', ...row);
    let c = map.get(id);
    if (c === undefined) { c = [...row, 0, 0, 0]; map.set(id, c); }
    const value = feedbackValue(f.type, f.value);
    c[5]++;
    if (value !== null) { c[6] += value; c[7] += value * value; }
  }
  return JSON.stringify([...map.values()]);
}

/** Journal feedback entries merged into every feedback rollup row they add to, in key order. */
export function expandFeedback(entries: readonly string[]): FeedbackCell[] {
  const map = new Map<string, FeedbackCell>();
  for (const e of entries) {
    for (const [t, k, m, metric, type, count, sum, sumsq] of JSON.parse(e) as Array<[string, string, string, string, string, number, number, number]>) {
      for (const [span, at] of [['h', t], ['d', dayOf(t)]] as const) {
        for (const grain of ['cell', 'model'] as const) {
          const key = grain === 'cell' ? k : '';
          const id = keyOf(span, grain, at, key, m, metric, type);
          let c = map.get(id);
          if (c === undefined) { c = { span, grain, t: at, keyId: key, model: m, metric, type, count: 0, sum: 0, sumsq: 0 }; map.set(id, c); }
          c.count += count; c.sum += sum; c.sumsq += sumsq;
        }
      }
    }
  }
  return [...map.values()].sort((a, b) => cmp(a.span, b.span) || cmp(a.grain, b.grain) || cmp(a.t, b.t) || cmp(a.model, b.model)
    || cmp(a.metric, b.metric) || cmp(a.type, b.type) || cmp(a.keyId, b.keyId));
}
