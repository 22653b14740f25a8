// Request history over the raw records: keyset pages (newest first) whose every query scans a bounded
// number of rows, the detail of one record, and a streamed export. A time window is an id range: ids
// are UUIDv7, whose first 48 bits are the request's start in ms, so the primary key serves as the time index.
import { decimalToNumber } from '../catalog/decimal.ts';
import { decimal, iso, jsonOrNull, num, numOrNull, str, strOrNull, type Row } from '../store/rows.ts';
import type { SqlRunner } from '../store/sql-runner.ts';
import { inList, keyScope, scopedKeys, type Access } from './access.ts';
import type { AttemptView, FeedbackView, RequestSummary } from './ui/api-types.ts';

export type HistoryFilter = {
  from?: number; to?: number; keys?: string[]; users?: string[]; models?: string[]; served?: string[]; providers?: string[];
  routes?: string[]; status?: 'ok' | 'error' | number; stream?: boolean; minCost?: string; maxCost?: string; feedback?: boolean;
  /** Answers that did not finish normally (inferences.partial). */
  partial?: boolean;
  /** Requests with a recorded router decision (router_decisions). */
  routed?: boolean;
};

/** Rows one page may scan; a page with fewer matches reports how far it got (`scanned_to`). */
export const SCAN_LIMIT = 10_000;
export const MAX_PAGE = 200;

/** The smallest UUIDv7 string at or after instant `ms` (ids compare as lowercase hex text). */
export function idAt(ms: number): string {
  const h = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}`;
}

/** The start instant encoded in a UUIDv7 id. */
export const timeOfId = (id: string): number => parseInt(id.slice(0, 8) + id.slice(9, 13), 16);

/** What a list row shows (the bodies stay on disk). */
const SUMMARY_COLUMNS = 'id, created_at, key_id, route, requested_model, served_model, provider, status, error_code, stream, latency_ms, ttft_ms, input_tokens, output_tokens, cost_usd, attempts, partial';

/** `routed`: whether a router decision is recorded for it (routedIds in router-decision.ts). */
export function toSummary(r: Row, keyName: (id: string) => string | null, routed: boolean): RequestSummary {
  const attempts = r.attempts === null || r.attempts === undefined ? [] : (JSON.parse(String(r.attempts)) as unknown[]);
  const keyId = strOrNull(r.key_id);
  return {
    id: str(r.id), created_at: iso(r.created_at), key_id: keyId, key_name: keyId === null ? null : keyName(keyId), route: str(r.route),
    requested_model: str(r.requested_model), served_model: strOrNull(r.served_model), provider: strOrNull(r.provider), status: num(r.status),
    error_code: strOrNull(r.error_code), stream: r.stream === true || r.stream === 1 || r.stream === 1n, latency_ms: num(r.latency_ms),
    ttft_ms: numOrNull(r.ttft_ms), input_tokens: num(r.input_tokens), output_tokens: num(r.output_tokens), cost_usd: decimal(r.cost_usd),
    attempts: Array.isArray(attempts) ? attempts.length : 0, partial: r.partial === true || r.partial === 1 || r.partial === 1n, routed,
  };
}

/** Conditions over the scanned rows (alias s) for the filters and the caller's scope. */
function conditions(sql: SqlRunner, f: HistoryFilter, access: Access, owners: Map<string, string>): { sql: string[]; params: unknown[] } {
  const out: string[] = [];
  const params: unknown[] = [];
  const add = (col: string, values: readonly string[] | undefined): void => {
    if (!values || values.length === 0) return;
    const l = inList(col, values);
    out.push(l.sql); params.push(...l.params);
  };
  const keys = scopedKeys(f, access, owners);
  if (keys) add('s.key_id', keys);
  add('s.requested_model', f.models);
  add('s.served_model', f.served);
  add('s.provider', f.providers);
  add('s.route', f.routes);
  if (f.status === 'ok') out.push('s.status < 400');
  else if (f.status === 'error') out.push('s.status >= 400');
  else if (typeof f.status === 'number') { out.push('s.status = ?'); params.push(f.status); }
  if (f.stream !== undefined) { out.push('s.stream = ?'); params.push(f.stream); }
  const cost = sql.dialect === 'postgres' ? 's.cost_usd' : 'CAST(s.cost_usd AS REAL)';
  const costParam = sql.dialect === 'postgres' ? 'CAST(? AS NUMERIC)' : '?';
  if (f.minCost !== undefined) { out.push(`${cost} >= ${costParam}`); params.push(sql.dialect === 'postgres' ? f.minCost : decimalToNumber(f.minCost)); }
  if (f.maxCost !== undefined) { out.push(`${cost} <= ${costParam}`); params.push(sql.dialect === 'postgres' ? f.maxCost : decimalToNumber(f.maxCost)); }
  if (f.feedback !== undefined) out.push(`${f.feedback ? '' : 'NOT '}EXISTS (SELECT 1 FROM feedback fb WHERE fb.inference_id = s.id)`);
  if (f.partial !== undefined) { out.push('s.partial = ?'); params.push(f.partial); }
  if (f.routed !== undefined) out.push(`${f.routed ? '' : 'NOT '}EXISTS (SELECT 1 FROM router_decisions d WHERE d.inference_id = s.id)`);
  return { sql: out, params };
}

export type Page = { rows: Row[]; nextCursor: string | null; scannedTo: string | null };

/**
 * One page, newest first, older than `cursor`. The inner query walks at most SCAN_LIMIT ids of the
 * window down the primary key; the filters apply to those. With fewer matches than asked the page says
 * where the scan stopped (`scannedTo`) and the next cursor continues from there.
 */
export async function historyPage(sql: SqlRunner, f: HistoryFilter, access: Access, owners: Map<string, string>, limit: number, cursor?: string): Promise<Page> {
  return walkingTheKey(sql, (q) => page(q, f, access, owners, limit, cursor));
}

/**
 * The scans below are meant to walk the primary key backwards and stop after SCAN_LIMIT rows. Without
 * statistics (a table just loaded, autovacuum off) PostgreSQL instead read the whole window by bitmap
 * and sorted it on disk: 600 ms for a 24 h window of 1M records, against 10 ms by the key. Turning
 * bitmap scans and sorts off for these statements (SET LOCAL, in a transaction of their own) keeps the
 * intended plan whatever the statistics say. SQLite walks the key by itself.
 */
export function walkingTheKey<T>(sql: SqlRunner, fn: (q: SqlRunner) => Promise<T>): Promise<T> {
  if (sql.dialect !== 'postgres') return fn(sql);
  return sql.tx(async (q) => {
    await q.run('SET LOCAL enable_bitmapscan = off');
    await q.run('SET LOCAL enable_sort = off');
    return fn(q);
  });
}

async function page(sql: SqlRunner, f: HistoryFilter, access: Access, owners: Map<string, string>, limit: number, cursor?: string): Promise<Page> {
  const hi = cursor ?? (f.to !== undefined ? idAt(f.to) : 'g'); // 'g' sorts after every hex id
  const lo = f.from !== undefined ? idAt(f.from) : '';
  const c = conditions(sql, f, access, owners);
  // The summary's columns only: the bodies (kilobytes each) stay on disk for a list page.
  const inner = `SELECT ${SUMMARY_COLUMNS} FROM inferences WHERE id < ? AND id >= ? ORDER BY id DESC LIMIT ${SCAN_LIMIT}`;
  const where = c.sql.length ? `WHERE ${c.sql.join(' AND ')}` : '';
  const rows = await sql.all(`SELECT s.* FROM (${inner}) s ${where} ORDER BY s.id DESC LIMIT ?`, [hi, lo, ...c.params, limit + 1]);
  if (rows.length > limit) return { rows: rows.slice(0, limit), nextCursor: str(rows[limit - 1]!.id), scannedTo: null };
  if (c.sql.length === 0) return { rows, nextCursor: null, scannedTo: null };
  const scan = (await sql.all(`SELECT COUNT(*) AS n, MIN(id) AS m FROM (SELECT id FROM inferences WHERE id < ? AND id >= ? ORDER BY id DESC LIMIT ${SCAN_LIMIT}) x`, [hi, lo]))[0];
  if (!scan || num(scan.n) < SCAN_LIMIT) return { rows, nextCursor: null, scannedTo: null };
  const m = str(scan.m);
  return { rows, nextCursor: m, scannedTo: new Date(timeOfId(m)).toISOString() };
}

/** One record (with every column), or null when absent or outside the caller's scope. */
export async function historyRecord(sql: SqlRunner, id: string, access: Access): Promise<Row | null> {
  const r = (await sql.all('SELECT * FROM inferences WHERE id = ?', [id]))[0];
  if (!r) return null;
  const scope = keyScope(access);
  if (scope && !scope.includes(str(r.key_id))) return null;
  return r;
}

export async function feedbackOf(sql: SqlRunner, id: string): Promise<FeedbackView[]> {
  const rows = await sql.all('SELECT id, metric, type, value, reason, created_at FROM feedback WHERE inference_id = ? ORDER BY created_at, id LIMIT 500', [id]);
  return rows.map((r) => ({ id: str(r.id), metric: str(r.metric), type: str(r.type), value: str(r.value), reason: strOrNull(r.reason), created_at: iso(r.created_at) }));
}

export function attemptsOf(r: Row): AttemptView[] {
  const list = r.attempts === null || r.attempts === undefined ? [] : (JSON.parse(String(r.attempts)) as Array<Record<string, unknown>>);
  return list.map((a) => ({
    provider: String(a.provider ?? ''), model: String(a.model ?? ''), status: typeof a.status === 'number' ? a.status : null,
    error: a.error === null || a.error === undefined ? null : String(a.error), latency_ms: Number(a.latencyMs ?? 0),
  }));
}

export const metadataOf = (r: Row): Record<string, unknown> | null => jsonOrNull(r.metadata);
export const extraOf = (r: Row): Record<string, unknown> | null => jsonOrNull(r.extra);

/** Every matching record of the window, newest first, a page of rows at a time (for the streamed export). */
export async function* historyExport(sql: SqlRunner, f: HistoryFilter, access: Access, owners: Map<string, string>): AsyncGenerator<Row[]> {
  let cursor: string | undefined;
  for (;;) {
    const p = await historyPage(sql, f, access, owners, 1000, cursor);
    if (p.rows.length > 0) yield p.rows;
    if (p.nextCursor === null) return;
    cursor = p.nextCursor;
  }
}
