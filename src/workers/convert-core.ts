// Request conversion shared by the inline path (src/engine/attempt.ts) and the worker pool
// (src/workers/convert.ts), so both produce the same upstream bytes by construction.
// Everything here is plain data in, plain data out: no config objects, sockets or closures cross it.
import type { CanonicalRequest } from '../formats/canonical.ts';
import type { ClientFormat, TargetModel, WireFormat } from '../formats/codec.ts';
import { clientCodecFor, codecFor, relayCodecFor } from '../formats/registry.ts';
import { validateChatRequest } from '../formats/openai-chat/validate.ts';
import { validateMessagesRequest } from '../formats/anthropic-messages/validate.ts';
import { validateResponsesRequest } from '../formats/openai-responses/validate.ts';
import { parseJsonObject } from '../util/parse-json.ts';
import { GatewayError } from '../gateway-error.ts';
import type { CompiledMapping, MappingRow } from '../mapping/compile.ts';
import { fitCanonicalToolIds, fitRelayedToolIds, type ToolIdRule } from '../formats/tool-ids.ts';
import { FORMAT_TOOL_NAMES, fitCanonicalToolNames, type ToolNameMap } from '../formats/tool-names.ts';
import { lowerToolSearch } from '../formats/tool-search.ts';
import { lowerToolChanges } from '../formats/tool-changes.ts';
import { labelDocuments } from '../formats/document-labels.ts';

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
  /** Client formats the provider serves itself, with their paths (Provider.native). */
  native: Partial<Record<ClientFormat, string>>;
  /** The model's catalog limits and capabilities, which the target's encoder checks. */
  model?: TargetModel;
  mappingRows: readonly MappingRow[];
  /** The tool call ids the provider accepts (Provider.toolCallIds); others are replaced on the way up. */
  toolIds: ToolIdRule | null;
};

/** The upstream request for one target, before auth and forwarded headers are added. */
/** `toolNames`: the tool names replaced for this target, upstream name -> the client's (src/formats/tool-names.ts). */
export type EncodedAttempt = { path: string; body: Rec; headers?: Record<string, string>; adjustments: string[]; toolNames?: ToolNameMap };

export const VALIDATORS: Partial<Record<ClientFormat, (b: unknown) => Rec>> = {
  'openai-chat': validateChatRequest,
  'anthropic-messages': validateMessagesRequest,
  'openai-responses': validateResponsesRequest,
};

/** Parses (under the depth limit) and validates a client body; throws GatewayError (400) like the inline path. */
export function parseAndValidate(bytes: Buffer, clientFormat: ClientFormat, maxDepth: number): Rec {
  return VALIDATORS[clientFormat]!(parseJsonObject(bytes, maxDepth));
}

/**
 * Encodes a validated client body for `t`: same format (or a format the provider also serves natively)
 * relays through the passthrough codec (model rewritten), else the client codec decodes (once, cached in `canonical`) and the target's encodes.
 * Then the provider's mapping rows apply. Throws GatewayError for what the target cannot honour.
 */
export function encodeForTarget(clientFormat: ClientFormat, body: Rec, canonical: { value: CanonicalRequest | null }, t: TargetSpec, mapping: CompiledMapping, maxOutputTokens?: number): EncodedAttempt {
  const codec = codecFor(t.format);
  let path: string; let out: Rec; let headers: Record<string, string> | undefined;
  let codecAdjustments: string[] | undefined;
  let toolNames: ToolNameMap | null = null;
  const relay = relayCodecFor(t, clientFormat);
  if (relay) {
    codecAdjustments = [];
    out = relay.prepareRequest(maxOutputTokens === undefined ? body : capClientBody(body, maxOutputTokens, clientFormat), { upstreamModel: t.upstream, modelInBody: t.modelInBody, adjustments: codecAdjustments });
    // A body in the provider's own format (not a Responses body relayed to a provider that serves it natively).
    const ids = clientFormat === t.format ? fitRelayedToolIds(out, t.format, t.toolIds) : null;
    if (ids !== null) codecAdjustments.push(ids);
    path = t.native[clientFormat] ?? t.chatPath ?? '/messages';
  } else {
    canonical.value ??= clientCodecFor(clientFormat).decodeRequest(body);
    const native = canonical.value.native_only;
    if (native !== undefined) throw new GatewayError('unsupported_parameter', native.message, { param: native.param });
    // The decoded request is shared by every attempt: ids are fitted on a copy for this target.
    const ids = fitCanonicalToolIds(maxOutputTokens === undefined ? canonical.value : capCanonical(canonical.value, maxOutputTokens), t.toolIds);
    // Tools added mid-conversation are declared before names are fitted, so added names are fitted too.
    const changed = lowerToolChanges(ids.req, t.format);
    const named = fitCanonicalToolNames(changed.req, FORMAT_TOOL_NAMES[t.format]);
    toolNames = named.names;
    const searched = lowerToolSearch(named.req, t.format);
    // A document's title and context, which only Anthropic's format holds, as text before it.
    const labelled = labelDocuments(searched.req, t.format);
    const enc = codec.upstream.encodeRequest({ ...labelled.req, model: t.upstream }, {
      upstreamModel: t.upstream, provider: t.provider, ...(t.model ? { model: t.model } : {}),
    });
    const fitted = [ids.adjustment, ...changed.adjustments, named.adjustment, searched.adjustment, ...labelled.adjustments].filter((a) => a !== null);
    const before = fitted.length > 0 ? [...(canonical.value.decode_adjustments ?? []), ...fitted] : canonical.value.decode_adjustments;
    codecAdjustments = before ? [...before, ...(enc.adjustments ?? [])] : enc.adjustments;
    out = enc.body as Rec;
    if (!t.modelInBody) delete out.model;
    path = t.chatPath ?? enc.path;
    headers = enc.headers;
  }
  const mapped = mapping(out, t.upstream, t.model?.sampling ? { sampling: t.model.sampling } : undefined);
  const adjustments = codecAdjustments && codecAdjustments.length > 0 ? [...codecAdjustments, ...mapped] : mapped;
  return { path, body: out, ...(headers ? { headers } : {}), adjustments, ...(toolNames ? { toolNames } : {}) };
}

/**
 * A per-attempt output cap (router max_cost) on a client body in its own format: the output limit the
 * client set (max_completion_tokens or max_tokens; max_output_tokens for Responses bodies) lowered to the
 * cap, or the cap set as max_tokens / max_output_tokens (provider mappings rename it where needed).
 */
function capClientBody(body: Rec, cap: number, clientFormat: ClientFormat): Rec {
  const out: Rec = { ...body };
  // The Responses API has one output limit, max_output_tokens (it refuses max_tokens).
  const fields = clientFormat === 'openai-responses' ? ['max_output_tokens'] : ['max_completion_tokens', 'max_tokens'];
  let set = false;
  for (const f of fields) {
    if (typeof out[f] === 'number') { out[f] = Math.min(out[f] as number, cap); set = true; }
  }
  if (!set) out[fields.at(-1)!] = cap;
  const th = out.thinking as { type?: string; budget_tokens?: number } | undefined;
  if (th?.type === 'enabled' && typeof th.budget_tokens === 'number' && th.budget_tokens >= cap) {
    out.thinking = cap > 1024 ? { ...th, budget_tokens: cap - 1 } : { type: 'disabled' };
  }
  return out;
}

/** The same cap on a canonical request (a thinking budget must stay below max_tokens). */
function capCanonical(req: CanonicalRequest, cap: number): CanonicalRequest {
  const max = Math.min(req.max_tokens ?? cap, cap);
  const th = req.thinking;
  if (th?.type === 'enabled' && th.budget_tokens >= max) {
    return { ...req, max_tokens: max, thinking: max > 1024 ? { type: 'enabled', budget_tokens: max - 1 } : { type: 'disabled' } };
  }
  return { ...req, max_tokens: max };
}

/** Top-level fields that hold conversation content; the rest is small and goes back to the main thread. */
const CONTENT_FIELDS = new Set(['messages', 'system', 'tools', 'contents', 'input', 'prompt']);

/** Responses answers echo the request's tools and name their calls from them (custom and namespaced tools). */
const RESPONSES_CONTENT_FIELDS = new Set([...CONTENT_FIELDS].filter((f) => f !== 'tools'));

/**
 * The parameters of a validated body without its content: what the main thread needs (model,
 * stream, stream_options, max tokens, metadata, extra) to route, limit and record the request,
 * and for a Responses body what its answer is encoded from (tools).
 */
export function bodyMeta(body: Rec, clientFormat?: ClientFormat): Rec {
  const skip = clientFormat === 'openai-responses' ? RESPONSES_CONTENT_FIELDS : CONTENT_FIELDS;
  const out: Rec = {};
  for (const [k, v] of Object.entries(body)) if (!skip.has(k)) out[k] = v;
  return out;
}
