// Bedrock Converse response body, stop reasons, usage and error bodies -> canonical values.
import type { Block, CanonicalResponse, ErrorKind, StopReason, Usage } from '../canonical.ts';
import type { UpstreamError } from '../codec.ts';
import { kindFromStatus, parseErrorJson, plainErrorMessage } from '../errors.ts';
import { uuidv7 } from '../../util/uuid.ts';

export const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Guardrail and content-filter stops are refusals; a full context window ends like max_tokens. */
export function bedrockStopReason(reason: unknown): StopReason | null {
  switch (reason) {
    case 'end_turn': return 'end_turn';
    case 'tool_use': return 'tool_use';
    case 'max_tokens': case 'model_context_window_exceeded': return 'max_tokens';
    case 'stop_sequence': return 'stop_sequence';
    case 'guardrail_intervened': case 'content_filtered': return 'refusal';
    default: return typeof reason === 'string' ? 'end_turn' : null;
  }
}

/** Sums TokenUsage.cacheDetails ({ttl, inputTokens} entries) per lifetime; malformed entries and unknown ttls are skipped. */
function writesByTtl(details: unknown[]): { w5m: number; w1h: number } {
  let w5m = 0; let w1h = 0;
  for (const d of details) {
    if (!isRecord(d)) continue;
    const n = d.inputTokens;
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) continue;
    if (d.ttl === '1h') w1h += n;
    else if (d.ttl === '5m') w5m += n;
  }
  return { w5m, w1h };
}

/**
 * Converse reports inputTokens without cache reads and writes (as Anthropic does), so they map
 * one to one. cacheDetails splits the writes by lifetime, which matters because 1-hour writes
 * cost more; writes it does not cover (all of them, without cacheDetails) count as five-minute
 * writes, Bedrock's default lifetime. cacheWriteInputTokens stays the total: a split claiming
 * more is cut down to it (1h first, as Bedrock lists it) so the buckets never bill extra tokens.
 */
export function bedrockUsage(u: unknown): Usage {
  const r = isRecord(u) ? u : {};
  const split = writesByTtl(Array.isArray(r.cacheDetails) ? r.cacheDetails : []);
  const write = typeof r.cacheWriteInputTokens === 'number' ? num(r.cacheWriteInputTokens) : split.w5m + split.w1h;
  const w1h = Math.min(split.w1h, write);
  return {
    input_tokens: num(r.inputTokens), output_tokens: num(r.outputTokens),
    cache_read_input_tokens: num(r.cacheReadInputTokens), cache_creation_input_tokens: write,
    cache_creation_5m: write - w1h, cache_creation_1h: w1h, reasoning_tokens: 0,
  };
}

/** One Converse content block -> canonical block; kinds the gateway does not model are skipped. */
export function bedrockBlock(c: unknown): Block | null {
  if (!isRecord(c)) return null;
  if (typeof c.text === 'string') return { type: 'text', text: c.text };
  if (isRecord(c.toolUse)) {
    const t = c.toolUse;
    return { type: 'tool_use', id: str(t.toolUseId), name: str(t.name), input: t.input ?? {} };
  }
  if (isRecord(c.reasoningContent)) {
    const r = c.reasoningContent;
    if (isRecord(r.reasoningText)) return { type: 'thinking', thinking: str(r.reasoningText.text), signature: str(r.reasoningText.signature) };
    if (typeof r.redactedContent === 'string') return { type: 'redacted_thinking', data: r.redactedContent };
  }
  if (isRecord(c.image)) {
    const img = c.image;
    const src = isRecord(img.source) ? img.source : {};
    if (typeof src.bytes === 'string') return { type: 'image', source: { type: 'base64', media_type: `image/${str(img.format)}`, data: src.bytes } };
  }
  return null;
}

/**
 * The matched stop sequence: Converse reports it only for Anthropic models, in
 * additionalModelResponseFields.stop_sequence (requested through additionalModelResponseFieldPaths).
 */
export function matchedStopSequence(root: Record<string, unknown>): string | null {
  const extra = root.additionalModelResponseFields;
  return isRecord(extra) && typeof extra.stop_sequence === 'string' ? extra.stop_sequence : null;
}

/** Converse bodies carry no id or model name: the id is minted here, the engine knows the model. */
export function decodeBedrockResponse(body: unknown): CanonicalResponse {
  const root = isRecord(body) ? body : {};
  // Converse always answers with `output`; a 200 without it (an error body, a proxy's JSON) is no answer.
  if (!isRecord(root.output)) throw new Error('a Converse response without output');
  const output = root.output;
  const message = isRecord(output.message) ? output.message : {};
  const content: Block[] = [];
  for (const c of Array.isArray(message.content) ? message.content : []) {
    const b = bedrockBlock(c);
    if (b) content.push(b);
  }
  return {
    id: uuidv7(), model: '', content, stop_reason: bedrockStopReason(root.stopReason), stop_sequence: matchedStopSequence(root),
    usage: bedrockUsage(root.usage),
  };
}

/** Exception names (as in x-amzn-ErrorType, `__type` or a stream's :exception-type) -> kinds. */
const KIND_BY_EXCEPTION: Record<string, ErrorKind> = {
  validationexception: 'invalid_request', accessdeniedexception: 'permission',
  unrecognizedclientexception: 'authentication', expiredtokenexception: 'authentication',
  resourcenotfoundexception: 'not_found', throttlingexception: 'rate_limit',
  servicequotaexceededexception: 'rate_limit', modelnotreadyexception: 'overloaded',
  serviceunavailableexception: 'overloaded', modeltimeoutexception: 'timeout',
  internalserverexception: 'api_error', modelerrorexception: 'api_error', modelstreamerrorexception: 'api_error',
};

/** `com.amazon.coral#ValidationException` / `ValidationException:` / `validationException` -> lookup key. */
const exceptionKey = (name: string): string => name.replace(/^.*#/, '').replace(/:.*$/, '').toLowerCase();

export function bedrockErrorKind(exception: string | undefined, status: number): ErrorKind {
  return (exception === undefined ? undefined : KIND_BY_EXCEPTION[exceptionKey(exception)]) ?? kindFromStatus(status);
}

/**
 * Decodes `{message}` (or `{Message}`, `{__type, message}`) error bodies. AWS names the exception
 * in the `x-amzn-errortype` response header; pass the headers when available, since the status
 * alone cannot tell ModelNotReadyException (retry later: overloaded) from ThrottlingException.
 */
export function decodeBedrockError(status: number, bodyText: string, headers: Record<string, string> = {}): UpstreamError {
  const parsed = parseErrorJson(bodyText);
  const r = isRecord(parsed) ? parsed : {};
  const message = str(r.message) || str(r.Message) || plainErrorMessage(status, bodyText);
  const headerType = Object.entries(headers).find(([k]) => k.toLowerCase() === 'x-amzn-errortype')?.[1] ?? '';
  const type = headerType || str(r.__type) || str(r.code);
  const out: UpstreamError = { kind: bedrockErrorKind(type || undefined, status), message };
  if (type !== '') out.upstreamType = type.replace(/^.*#/, '').replace(/:.*$/, '');
  return out;
}
