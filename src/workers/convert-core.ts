// Request conversion shared by the inline path (src/engine/attempt.ts) and the worker pool
// (src/workers/convert.ts), so both produce the same upstream bytes by construction.
// Everything here is plain data in, plain data out: no config objects, sockets or closures cross it.
import type { CanonicalRequest } from '../formats/canonical.ts';
import type { TargetInfo, WireFormat } from '../formats/codec.ts';
import { codecFor } from '../formats/registry.ts';
import { validateChatRequest } from '../formats/openai-chat/validate.ts';
import { validateMessagesRequest } from '../formats/anthropic-messages/validate.ts';
import { parseJsonObject } from '../http/body.ts';
import type { CompiledMapping, MappingRow } from '../mapping/compile.ts';

type Rec = Record<string, unknown>;

/** What encoding for one target needs, as structured-cloneable data (a ModelEntry minus closures). */
export type TargetSpec = {
  /** provider/model id of the entry. */
  id: string;
  provider: string;
  format: WireFormat;
  upstream: string;
  modelInBody: boolean;
  chatPath: string | null;
  capabilities?: TargetInfo['capabilities'];
  mappingRows: readonly MappingRow[];
};

/** The upstream request for one target, before auth and forwarded headers are added. */
export type EncodedAttempt = { path: string; body: Rec; headers?: Record<string, string>; adjustments: string[] };

export const VALIDATORS: Partial<Record<WireFormat, (b: unknown) => Rec>> = {
  'openai-chat': validateChatRequest,
  'anthropic-messages': validateMessagesRequest,
};

/** Parses (under the depth limit) and validates a client body; throws GatewayError (400) like the inline path. */
export function parseAndValidate(bytes: Buffer, clientFormat: WireFormat, maxDepth: number): Rec {
  return VALIDATORS[clientFormat]!(parseJsonObject(bytes, maxDepth));
}

/**
 * Encodes a validated client body for `t`: same format relays through the passthrough codec (model
 * rewritten), else the client codec decodes (once, cached in `canonical`) and the target's encodes.
 * Then the provider's mapping rows apply. Throws GatewayError for what the target cannot honour.
 */
export function encodeForTarget(clientFormat: WireFormat, body: Rec, canonical: { value: CanonicalRequest | null }, t: TargetSpec, mapping: CompiledMapping): EncodedAttempt {
  const codec = codecFor(t.format);
  let path: string; let out: Rec; let headers: Record<string, string> | undefined;
  if (t.format === clientFormat && codec.passthrough) {
    out = codec.passthrough.prepareRequest(body, { upstreamModel: t.upstream, modelInBody: t.modelInBody });
    path = t.chatPath ?? '/messages';
  } else {
    canonical.value ??= codecFor(clientFormat).client!.decodeRequest(body);
    const enc = codec.upstream.encodeRequest({ ...canonical.value, model: t.upstream }, {
      upstreamModel: t.upstream, provider: t.provider, ...(t.capabilities ? { capabilities: t.capabilities } : {}),
    });
    out = enc.body as Rec;
    if (!t.modelInBody) delete out.model;
    path = t.chatPath ?? enc.path;
    headers = enc.headers;
  }
  const adjustments = mapping(out, t.upstream);
  return { path, body: out, ...(headers ? { headers } : {}), adjustments };
}

/** Top-level fields that hold conversation content; the rest is small and goes back to the main thread. */
const CONTENT_FIELDS = new Set(['messages', 'system', 'tools', 'contents', 'input', 'prompt']);

/**
 * The parameters of a validated body without its content: what the main thread needs (model,
 * stream, stream_options, max tokens, metadata, extra) to route, limit and record the request.
 */
export function bodyMeta(body: Rec): Rec {
  const out: Rec = {};
  for (const [k, v] of Object.entries(body)) if (!CONTENT_FIELDS.has(k)) out[k] = v;
  return out;
}
