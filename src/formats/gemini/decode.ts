// Gemini response body, finish reasons, usage and error envelopes -> canonical values.
import type { Block, CanonicalResponse, ErrorKind, StopReason, Usage } from '../canonical.ts';
import type { UpstreamError } from '../codec.ts';
import { kindFromStatus, parseErrorJson, plainErrorMessage } from '../errors.ts';
import { uuidv7 } from '../../util/uuid.ts';
import { GENERATED_CALL_ID_PREFIX } from './encode.ts';
import type { GeminiPart, GeminiUsage } from './types.ts';
import { isRecord, parseGeminiResponse } from './types.ts';

/** Finish reasons that mean the model or its filters declined to answer. */
const REFUSALS = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY', 'LANGUAGE']);

/**
 * Gemini reports STOP both for a natural end and for a stop sequence (the matched text is not in
 * the output), so stop_sequence cannot be told apart and decodes as end_turn. STOP with function
 * calls in the candidate is a tool turn. Tool-call failures (MALFORMED_FUNCTION_CALL, ...) and
 * OTHER end the turn without a more precise reason.
 */
export function geminiStopReason(finishReason: string | undefined, hasToolCalls: boolean): StopReason | null {
  if (finishReason === undefined || finishReason === 'FINISH_REASON_UNSPECIFIED') return null;
  if (finishReason === 'MAX_TOKENS') return 'max_tokens';
  if (REFUSALS.has(finishReason)) return 'refusal';
  return hasToolCalls ? 'tool_use' : 'end_turn';
}

/**
 * promptTokenCount includes cached tokens, so uncached input = prompt - cached (tool-use prompt
 * tokens from built-in tools are input too). Thought tokens are billed as output.
 */
export function geminiUsage(u: GeminiUsage | undefined): Usage {
  const prompt = (u?.promptTokenCount ?? 0) + (u?.toolUsePromptTokenCount ?? 0);
  const cached = u?.cachedContentTokenCount ?? 0;
  const thoughts = u?.thoughtsTokenCount ?? 0;
  return {
    input_tokens: Math.max(0, prompt - cached), output_tokens: (u?.candidatesTokenCount ?? 0) + thoughts,
    cache_read_input_tokens: cached, cache_creation_input_tokens: 0, cache_creation_5m: 0, cache_creation_1h: 0,
    reasoning_tokens: thoughts,
  };
}

/** A stable id for a function call Gemini sent without one: same response, same ids. */
export const generatedCallId = (responseId: string, n: number): string => `${GENERATED_CALL_ID_PREFIX}${responseId}_${n}`;

/**
 * Parts -> blocks. A signature on a non-thought part (Gemini 3 puts it on the first function call)
 * becomes an empty thinking block just before that part, so it survives clients that only echo
 * blocks back and encode.ts can reattach it to the same part.
 */
export function partsToBlocks(parts: GeminiPart[], responseId: string): Block[] {
  const out: Block[] = [];
  let calls = 0;
  for (const p of parts) {
    if (p.thought === true) {
      out.push({ type: 'thinking', thinking: p.text ?? '', signature: p.thoughtSignature ?? '' });
      continue;
    }
    if (p.thoughtSignature !== undefined) out.push({ type: 'thinking', thinking: '', signature: p.thoughtSignature });
    if (p.functionCall) {
      const id = p.functionCall.id ?? generatedCallId(responseId, calls);
      calls++;
      out.push({ type: 'tool_use', id, name: p.functionCall.name, input: p.functionCall.args });
    } else if (p.inlineData && p.inlineData.mimeType.startsWith('image/')) {
      out.push({ type: 'image', source: { type: 'base64', media_type: p.inlineData.mimeType, data: p.inlineData.data } });
    } else if (p.text !== undefined && p.text !== '') {
      out.push({ type: 'text', text: p.text });
    }
  }
  return out;
}

/** Decodes a whole generateContent body. A blocked prompt has no candidate and decodes as a refusal. */
export function decodeGeminiResponse(body: unknown): CanonicalResponse {
  const r = parseGeminiResponse(body);
  const id = r.responseId ?? uuidv7();
  const content = partsToBlocks(r.parts, id);
  const hasCalls = content.some((b) => b.type === 'tool_use');
  const stop = r.blockReason !== undefined && r.parts.length === 0 ? 'refusal' : geminiStopReason(r.finishReason, hasCalls);
  return { id, model: r.modelVersion ?? '', content, stop_reason: stop, stop_sequence: null, usage: geminiUsage(r.usage) };
}

/** google.rpc status names -> error kinds; the HTTP status is the fallback. */
const KIND_BY_STATUS: Record<string, ErrorKind> = {
  INVALID_ARGUMENT: 'invalid_request', FAILED_PRECONDITION: 'invalid_request', OUT_OF_RANGE: 'invalid_request',
  UNAUTHENTICATED: 'authentication', PERMISSION_DENIED: 'permission', NOT_FOUND: 'not_found',
  RESOURCE_EXHAUSTED: 'rate_limit', UNAVAILABLE: 'overloaded', DEADLINE_EXCEEDED: 'timeout',
  INTERNAL: 'api_error', UNKNOWN: 'api_error', UNIMPLEMENTED: 'not_implemented',
};

/**
 * Decodes `{error: {code, message, status, details}}`. A bad API key arrives as 400
 * INVALID_ARGUMENT with an ErrorInfo reason API_KEY_INVALID: that is an authentication error.
 */
export function decodeGeminiError(status: number, bodyText: string): UpstreamError {
  const root = parseErrorJson(bodyText);
  const err = isRecord(root) && isRecord(root.error) ? root.error : undefined;
  if (err === undefined) return { kind: kindFromStatus(status), message: plainErrorMessage(status, bodyText) };
  const rpc = typeof err.status === 'string' ? err.status : undefined;
  const details = Array.isArray(err.details) ? err.details : [];
  const keyInvalid = details.some((d) => isRecord(d) && d.reason === 'API_KEY_INVALID');
  const kind = keyInvalid ? 'authentication' : (rpc !== undefined ? KIND_BY_STATUS[rpc] : undefined) ?? kindFromStatus(status);
  const message = typeof err.message === 'string' && err.message !== '' ? err.message : plainErrorMessage(status, bodyText);
  return rpc === undefined ? { kind, message } : { kind, message, upstreamType: rpc };
}
