// Row <-> record mapping shared by the sqlite and postgres stores, so both return identical values
// (ISO timestamps in UTC with milliseconds, normalized decimal strings, parsed JSON columns).
import { formatDecimal, isDecimalString } from '../catalog/decimal.ts';
import type { AttemptRecord, FeedbackRow, InferenceRecord, KeyRecord, MetricType } from './types.ts';

export type Row = Record<string, unknown>;

const CANONICAL_ISO = /^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3}Z$/;

/**
 * True when `s` is exactly what `toISOString()` returns for the time it names, so it needs no
 * round trip through Date (which cost a microsecond per timestamp on the write path). Day 29 to 31
 * is checked against the month: Date would roll "02-30" over to "03-01", so that is not canonical.
 */
export function isCanonicalIso(s: string): boolean {
  if (!CANONICAL_ISO.test(s)) return false;
  const day = (s.charCodeAt(8) - 48) * 10 + s.charCodeAt(9) - 48;
  if (day <= 28) return true;
  const month = (s.charCodeAt(5) - 48) * 10 + s.charCodeAt(6) - 48;
  if (month !== 2) return day <= (month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31);
  const year = Number(s.slice(0, 4));
  return day === 29 && year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
}

/** Timestamps are normalized to `toISOString()` form so sqlite's text ordering equals time ordering. */
export function isoOrNull(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string' && isCanonicalIso(v)) return v;
  if (v instanceof Date) return v.toISOString();
  const d = new Date(String(v));
  if (Number.isNaN(d.getTime())) throw new TypeError(`invalid timestamp: ${String(v)}`);
  return d.toISOString();
}

export function iso(v: unknown): string {
  const s = isoOrNull(v);
  if (s === null) throw new TypeError('missing timestamp');
  return s;
}

export const str = (v: unknown): string => String(v);
export const strOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
export const num = (v: unknown): number => Number(v);
export const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
export const decimal = (v: unknown): string => formatDecimal(v === null || v === undefined ? '0' : String(v));

function json<T>(v: unknown, fallback: T): T {
  if (v === null || v === undefined) return fallback;
  return JSON.parse(String(v)) as T;
}
export const jsonOrNull = (v: unknown): Record<string, unknown> | null =>
  v === null || v === undefined ? null : (JSON.parse(String(v)) as Record<string, unknown>);
export const toJson = (v: unknown): string | null => (v === null || v === undefined ? null : JSON.stringify(v));

export const KEY_COLUMNS = 'id, name, hash, created_at, last_used_at, expires_at, revoked_at, allowed_models, budget_usd, budget_period, rpm_limit, tpm_limit';

export function keyParams(k: KeyRecord): unknown[] {
  return [k.id, k.name, k.hash, iso(k.createdAt), isoOrNull(k.lastUsedAt), isoOrNull(k.expiresAt), isoOrNull(k.revokedAt),
    JSON.stringify(k.allowedModels), k.budgetUsd === null ? null : formatDecimal(k.budgetUsd), k.budgetPeriod, k.rpmLimit, k.tpmLimit];
}

export function rowToKey(r: Row): KeyRecord {
  return {
    id: str(r.id), name: str(r.name), hash: str(r.hash), createdAt: iso(r.created_at),
    lastUsedAt: isoOrNull(r.last_used_at), expiresAt: isoOrNull(r.expires_at), revokedAt: isoOrNull(r.revoked_at),
    allowedModels: json<string[]>(r.allowed_models, []),
    budgetUsd: r.budget_usd === null || r.budget_usd === undefined ? null : decimal(r.budget_usd),
    budgetPeriod: (strOrNull(r.budget_period) as KeyRecord['budgetPeriod']),
    rpmLimit: numOrNull(r.rpm_limit), tpmLimit: numOrNull(r.tpm_limit),
  };
}

export const INFERENCE_COLUMNS = 'id, created_at, key_id, route, client_format, requested_model, served_model, provider, attempts, status, error_code, latency_ms, ttft_ms, stream, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, cost_usd, finish_reason, metadata, extra, client_ip, request_body, response_body, partial';

/**
 * The checks inferenceParams would fail on (timestamp, cost), without building the row: the writer
 * calls this on the request path to drop a record the store could never accept before it blocks a batch.
 */
export function assertStorable(x: InferenceRecord): void {
  if (!isCanonicalIso(x.createdAt) && !Number.isFinite(Date.parse(x.createdAt))) throw new TypeError(`invalid timestamp: ${x.createdAt}`);
  if (!isDecimalString(x.costUsd)) throw new TypeError(`not a decimal string: ${JSON.stringify(x.costUsd)}`);
}

/** `stream` and `partial` are passed as given so each driver can bind its own boolean representation. */
export function inferenceParams(x: InferenceRecord, streamValue: unknown, partialValue: unknown = x.partial === true): unknown[] {
  return [x.id, iso(x.createdAt), x.keyId, x.route, x.clientFormat, x.requestedModel, x.servedModel, x.provider,
    JSON.stringify(x.attempts), x.status, x.errorCode, Math.round(x.latencyMs), x.ttftMs === null ? null : Math.round(x.ttftMs),
    streamValue, x.inputTokens, x.outputTokens, x.cacheReadTokens, x.cacheWriteTokens, x.reasoningTokens,
    formatDecimal(x.costUsd), x.finishReason, toJson(x.metadata), toJson(x.extra), x.clientIp, x.requestBody, x.responseBody, partialValue];
}

export function rowToInference(r: Row): InferenceRecord {
  return {
    id: str(r.id), createdAt: iso(r.created_at), keyId: strOrNull(r.key_id), route: str(r.route),
    clientFormat: str(r.client_format), requestedModel: str(r.requested_model), servedModel: strOrNull(r.served_model),
    provider: strOrNull(r.provider), attempts: json<AttemptRecord[]>(r.attempts, []), status: num(r.status),
    errorCode: strOrNull(r.error_code), latencyMs: num(r.latency_ms), ttftMs: numOrNull(r.ttft_ms),
    stream: r.stream === true || r.stream === 1 || r.stream === 1n, inputTokens: num(r.input_tokens),
    outputTokens: num(r.output_tokens), cacheReadTokens: num(r.cache_read_tokens), cacheWriteTokens: num(r.cache_write_tokens),
    reasoningTokens: num(r.reasoning_tokens), costUsd: decimal(r.cost_usd), finishReason: strOrNull(r.finish_reason),
    metadata: jsonOrNull(r.metadata), extra: jsonOrNull(r.extra), clientIp: strOrNull(r.client_ip),
    requestBody: strOrNull(r.request_body), responseBody: strOrNull(r.response_body),
    // Present only when set, so a record reads back as it was written (absent = false).
    ...(r.partial === true || r.partial === 1 || r.partial === 1n ? { partial: true } : {}),
  };
}

export const FEEDBACK_COLUMNS = 'id, inference_id, key_id, metric, type, value, reason, tags, optimize, created_at';

export function feedbackParams(f: FeedbackRow): unknown[] {
  return [f.id, f.inferenceId, f.keyId, f.metric, f.type, f.value, f.reason, JSON.stringify(f.tags), f.optimize, iso(f.createdAt)];
}

export const isMetricType = (s: string): s is MetricType => s === 'boolean' || s === 'float' || s === 'comment';

/** Placeholder list "$1, $2, ..." (pg) or "?, ?, ..." (sqlite) for one row of `n` columns starting at `from`. */
export function placeholders(n: number, pg: boolean, from = 1): string {
  return Array.from({ length: n }, (_, i) => (pg ? `$${from + i}` : '?')).join(', ');
}
