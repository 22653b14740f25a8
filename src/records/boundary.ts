// The record's boundary: every value an inference record carries into the store is checked here, once,
// when the record is queued. A value no column can hold (a token count above 2^31-1, a fraction, NaN,
// a bad timestamp or cost) is repaired and the original kept in `extra.repaired`, so the record is
// stored (and billed) instead of failing its whole batch. Rows the store still refuses are isolated by
// the writer (see writer.ts) and, for records, stored once more in the reduced form `salvaged` builds.
import { formatDecimal, isDecimalString } from '../catalog/decimal.ts';
import { isCanonicalIso } from '../store/rows.ts';
import type { InferenceRecord } from '../store/types.ts';

/** The largest value of the INTEGER columns (PostgreSQL int4; SQLite would hold more, the contract does not). */
export const MAX_INT_COLUMN = 2_147_483_647;

const COUNT_FIELDS = ['inputTokens', 'outputTokens', 'cacheReadTokens', 'cacheWriteTokens', 'reasoningTokens', 'latencyMs'] as const;
type CountField = typeof COUNT_FIELDS[number] | 'ttftMs' | 'status';

/** A non-negative integer a column can hold, or null when `v` already is one. */
function repairedCount(v: unknown): number | null {
  if (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= MAX_INT_COLUMN) return null;
  const n = typeof v === 'number' ? v : typeof v === 'bigint' || typeof v === 'string' ? Number(v) : Number.NaN;
  if (Number.isNaN(n) || n <= 0) return 0;
  return Math.min(MAX_INT_COLUMN, Math.round(n));
}

/** Reported originals: short and plain, so a huge or odd value cannot grow the row. */
const shown = (v: unknown): string => (typeof v === 'string' ? v.slice(0, 64) : String(v).slice(0, 64));

/**
 * The record as the store can hold it: `rec` itself when every value fits (the usual case, no copy),
 * else a copy with the values repaired and `extra.repaired` naming each field and its original value.
 */
export function storableRecord(rec: InferenceRecord): { rec: InferenceRecord; repaired: boolean } {
  if (fits(rec)) return { rec, repaired: false };
  return repaired(rec);
}

const fitsCount = (v: unknown): boolean => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= MAX_INT_COLUMN;

/** The request path's check: no allocation, two regex tests (the same the store would make). */
function fits(r: InferenceRecord): boolean {
  return fitsCount(r.inputTokens) && fitsCount(r.outputTokens) && fitsCount(r.cacheReadTokens) && fitsCount(r.cacheWriteTokens)
    && fitsCount(r.reasoningTokens) && fitsCount(r.latencyMs) && (r.ttftMs === null || fitsCount(r.ttftMs))
    && Number.isInteger(r.status) && r.status >= 100 && r.status <= 599 && typeof r.stream === 'boolean'
    && typeof r.createdAt === 'string' && isCanonicalIso(r.createdAt)
    && typeof r.costUsd === 'string' && r.costUsd.charCodeAt(0) !== 45 /* - */ && isDecimalString(r.costUsd);
}

function repaired(rec: InferenceRecord): { rec: InferenceRecord; repaired: boolean } {
  let fixes: Partial<Record<CountField | 'createdAt' | 'costUsd' | 'stream', string>> | null = null;
  const out: Partial<InferenceRecord> = {};
  const fix = (field: CountField | 'createdAt' | 'costUsd' | 'stream', original: unknown): void => {
    (fixes ??= {})[field] = shown(original);
  };
  for (const f of COUNT_FIELDS) {
    const r = repairedCount(rec[f]);
    if (r !== null) { out[f] = r; fix(f, rec[f]); }
  }
  if (rec.ttftMs !== null) {
    const r = repairedCount(rec.ttftMs);
    if (r !== null) { out.ttftMs = r; fix('ttftMs', rec.ttftMs); }
  }
  if (!(Number.isInteger(rec.status) && rec.status >= 100 && rec.status <= 599)) { out.status = 500; fix('status', rec.status); }
  if (typeof rec.stream !== 'boolean') { out.stream = Boolean(rec.stream); fix('stream', rec.stream); }
  if (typeof rec.createdAt !== 'string' || (!isCanonicalIso(rec.createdAt) && !validIso(rec.createdAt))) {
    out.createdAt = new Date().toISOString();
    fix('createdAt', rec.createdAt);
  }
  if (typeof rec.costUsd !== 'string' || !isDecimalString(rec.costUsd)) {
    // An unreadable cost is stored as 0 and flagged: the record (tokens, model, key) still says what was used.
    out.costUsd = '0';
    fix('costUsd', rec.costUsd);
  } else if (rec.costUsd.startsWith('-')) {
    out.costUsd = '0';
    fix('costUsd', rec.costUsd);
  }
  if (fixes === null) return { rec, repaired: false };
  return { rec: { ...rec, ...out, extra: { ...(rec.extra ?? {}), repaired: fixes } }, repaired: true };
}

/** A timestamp PostgreSQL and the ISO text ordering can both hold: years 1 to 9999. */
function validIso(s: string): boolean {
  const t = Date.parse(s);
  return Number.isFinite(t) && t >= -62135596800000 && t <= 253402300799999;
}

/** Text kept of each free string field in a salvaged record. */
const SALVAGE_TEXT = 512;
const clip = (s: string | null): string | null => (s === null ? null : s.slice(0, SALVAGE_TEXT).replaceAll('\0', '\uFFFD').toWellFormed());

/**
 * The reduced form of a record the store refused even after the boundary checks (something no check
 * foresaw): what billing and usage need (id, time, key, models, tokens, cost, status) with free text
 * clipped and bodies, metadata and attempts left out, plus why. The writer stores this instead of
 * losing the record; a record refused even so is dropped and counted.
 */
export function salvaged(rec: InferenceRecord, why: string): InferenceRecord {
  return {
    ...rec,
    keyId: clip(rec.keyId), route: clip(rec.route) ?? '', clientFormat: clip(rec.clientFormat) ?? '',
    requestedModel: clip(rec.requestedModel) ?? '', servedModel: clip(rec.servedModel), provider: clip(rec.provider),
    errorCode: clip(rec.errorCode), finishReason: clip(rec.finishReason), clientIp: clip(rec.clientIp),
    costUsd: formatDecimal(rec.costUsd),
    attempts: [], metadata: null, requestBody: null, responseBody: null,
    extra: { salvaged: why.slice(0, 300) },
  };
}
