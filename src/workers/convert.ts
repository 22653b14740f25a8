// Piscina worker entry: parses, validates and converts large inference bodies off the event loop.
// Bytes come in as a transferred ArrayBuffer and go back the same way; errors travel as plain data.
import { Piscina } from 'piscina';
import type { ClientFormat } from '../formats/codec.ts';
import type { CanonicalRequest } from '../formats/canonical.ts';
import type { ToolNameMap } from '../formats/tool-names.ts';
import { GatewayError, type ErrorCode } from '../gateway-error.ts';
import { compileMapping, type CompiledMapping, type MappingRow } from '../mapping/compile.ts';
import { bodyMeta, encodeForTarget, parseAndValidate, type TargetSpec } from './convert-core.ts';
import { countInputImages } from '../engine/usage.ts';
import { readPromptOfBody, type PromptRead } from './prompt-read.ts';
import { nameThread } from './thread-name.ts';

nameThread('gw-convert');

type Rec = Record<string, unknown>;

/** A GatewayError as structured-cloneable data. */
export type WireError = { code: ErrorCode; message: string; param: string | null; status: number };

/** An encoded upstream request; `body` is the UTF-8 JSON, transferred. */
export type EncodedBytes = { id: string; path: string; headers?: Record<string, string>; adjustments: string[]; toolNames?: ToolNameMap; body: ArrayBuffer };

/**
 * prepare: parse + validate, return the body's parameters (`meta`: model, stream, ...) and the
 * original bytes, and encode for the primary target when `targets` names the body's model.
 * encode: parse an already validated body again and encode it for one (fallback) target.
 */
export type ConvertTask =
  /** `read`: for a key with a budget, read what its reservation needs of the content (src/workers/prompt-read.ts). */
  | { kind: 'prepare'; bytes: ArrayBuffer; clientFormat: ClientFormat; maxDepth: number; version: string; read: boolean; targets?: Record<string, TargetSpec> }
  | { kind: 'encode'; bytes: ArrayBuffer; clientFormat: ClientFormat; maxDepth: number; target: TargetSpec };

export type ConvertResult =
  | { kind: 'error'; error: WireError }
  /** This thread has no target table for the config version yet: send it again with `targets`. */
  | { kind: 'need-targets'; original: ArrayBuffer }
  /**
   * `images`: input images in the body (billed when the model prices them; the main thread never sees the content);
   * `read`: what the budget reservation needs of the content (src/workers/prompt-read.ts: the images' sizes, their base64
   * characters, its text priced; null unless the task asked, or when the body cannot be decoded).
   */
  | { kind: 'prepared'; meta: Rec; original: ArrayBuffer; primary: EncodedBytes | { id: string; error: WireError } | null; images: number; read: PromptRead | null }
  | { kind: 'encoded'; encoded: EncodedBytes }
  | { kind: 'encode-error'; error: WireError };

const mappings = new Map<string, CompiledMapping>();
/** Compiled once per distinct row set in this thread (rules are compiled, never per request). */
function mappingFor(rows: readonly MappingRow[]): CompiledMapping {
  const key = JSON.stringify(rows);
  let m = mappings.get(key);
  if (!m) { m = compileMapping(rows); mappings.set(key, m); }
  return m;
}

const encoder = new TextEncoder();

/**
 * Target tables by config version. The table (every model id -> target) is sent once per thread
 * and version instead of with every task: cloning a catalog-sized table costs the main thread
 * more than converting a small body (bench/convert-threshold.ts).
 */
const tables = new Map<string, Record<string, TargetSpec>>();
function tableFor(version: string, sent: Record<string, TargetSpec> | undefined): Record<string, TargetSpec> | undefined {
  if (sent) {
    tables.set(version, sent);
    if (tables.size > 2) tables.delete(tables.keys().next().value!);
    return sent;
  }
  return tables.get(version);
}

function toWire(e: unknown): WireError {
  if (e instanceof GatewayError) return { code: e.code, message: e.message, param: e.param, status: e.status };
  return { code: 'internal_error', message: `conversion failed: ${(e as Error).message}`, param: null, status: 500 };
}

function encodeBytes(clientFormat: ClientFormat, body: Rec, canonical: { value: CanonicalRequest | null }, t: TargetSpec): EncodedBytes {
  const enc = encodeForTarget(clientFormat, body, canonical, t, mappingFor(t.mappingRows));
  // TextEncoder gives a buffer of its own (never a pooled slab), so it can be transferred.
  const bytes = encoder.encode(JSON.stringify(enc.body));
  return { id: t.id, path: enc.path, ...(enc.headers ? { headers: enc.headers } : {}), adjustments: enc.adjustments, ...(enc.toolNames ? { toolNames: enc.toolNames } : {}), body: bytes.buffer as ArrayBuffer };
}

/**
 * A result whose buffers are transferred, not copied: an object carrying piscina's transferable and
 * value symbols is what Piscina.move marks as movable (the transfer list may hold several buffers).
 */
function moved(result: ConvertResult, transfer: ArrayBuffer[]): ConvertResult {
  return Piscina.move({ [Piscina.transferableSymbol]: transfer, [Piscina.valueSymbol]: result } as unknown as ArrayBuffer) as unknown as ConvertResult;
}

/** Piscina calls this with each task. */
export default function convertTask(task: ConvertTask): ConvertResult {
  const buf = Buffer.from(task.bytes);
  if (task.kind === 'encode') {
    try {
      const body = parseAndValidate(buf, task.clientFormat, task.maxDepth);
      const encoded = encodeBytes(task.clientFormat, body, { value: null }, task.target);
      return moved({ kind: 'encoded', encoded }, [encoded.body]);
    } catch (e) { return { kind: 'encode-error', error: toWire(e) }; }
  }
  const targets = tableFor(task.version, task.targets);
  if (!targets) return moved({ kind: 'need-targets', original: task.bytes }, [task.bytes]);
  let body: Rec;
  try { body = parseAndValidate(buf, task.clientFormat, task.maxDepth); } catch (e) { return { kind: 'error', error: toWire(e) }; }
  const meta = bodyMeta(body, task.clientFormat);
  const t = typeof body.model === 'string' && Object.hasOwn(targets, body.model) ? targets[body.model] : undefined;
  // Decoded and measured here for a budget's reservation (bench/pool-inline-images.ts); a translated primary target reuses the decode.
  const canonical = { value: null as CanonicalRequest | null };
  const images = countInputImages(body);
  const read = task.read ? readPromptOfBody(task.clientFormat, body, canonical) : null;
  let primary: EncodedBytes | { id: string; error: WireError } | null = null;
  if (t) {
    try { primary = encodeBytes(task.clientFormat, body, canonical, t); } catch (e) { primary = { id: t.id, error: toWire(e) }; }
  }
  const transfer = [task.bytes, ...(primary && 'body' in primary ? [primary.body] : [])];
  return moved({ kind: 'prepared', meta, original: task.bytes, primary, images, read }, transfer);
}
