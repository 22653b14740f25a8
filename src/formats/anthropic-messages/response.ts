// Non-streaming Messages responses both ways, plus the usage mapping the stream codecs share.
import type { CanonicalResponse, StopReason, Usage } from '../canonical.ts';
import { emptyUsage } from '../canonical.ts';
import { isRecord } from '../errors.ts';
import { decodeBlocks, encodeBlock } from './blocks.ts';

type Rec = Record<string, unknown>;

const STOP_REASONS = new Set<string>(['end_turn', 'max_tokens', 'stop_sequence', 'tool_use', 'pause_turn', 'refusal']);

/** Wire stop reason -> canonical; running out of context window is reported as max_tokens. */
export function stopReasonOf(v: unknown): StopReason | null {
  if (typeof v !== 'string') return null;
  if (v === 'model_context_window_exceeded') return 'max_tokens';
  return STOP_REASONS.has(v) ? (v as StopReason) : 'end_turn';
}

/** Canonical usage -> the wire object; only the fields present in `u` when `partial`. */
export function anthropicUsage(u: Partial<Usage>, partial = false): Rec {
  const out: Rec = {};
  const put = (key: string, v: number | undefined): void => {
    if (v !== undefined || !partial) out[key] = v ?? 0;
  };
  put('input_tokens', u.input_tokens);
  put('cache_creation_input_tokens', u.cache_creation_input_tokens);
  put('cache_read_input_tokens', u.cache_read_input_tokens);
  if (!partial || u.cache_creation_5m !== undefined || u.cache_creation_1h !== undefined) {
    out.cache_creation = { ephemeral_5m_input_tokens: u.cache_creation_5m ?? 0, ephemeral_1h_input_tokens: u.cache_creation_1h ?? 0 };
  }
  put('output_tokens', u.output_tokens);
  // Anthropic's own breakdown of reasoning output; sent only when there is something to report.
  if (u.reasoning_tokens !== undefined && u.reasoning_tokens > 0) out.output_tokens_details = { thinking_tokens: u.reasoning_tokens };
  if (u.service_tier !== undefined) out.service_tier = u.service_tier;
  return out;
}

/**
 * Wire usage -> canonical, only the fields present. Without a `cache_creation` split, cache
 * writes are counted as 5-minute writes, the default TTL, unless `partial`: a message_delta's
 * usage updates totals without the split, and must not overwrite the split message_start gave.
 */
export function decodeUsage(raw: unknown, partial = false): Partial<Usage> {
  const out: Partial<Usage> = {};
  if (!isRecord(raw)) return out;
  const n = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);
  const set = (key: 'input_tokens' | 'output_tokens' | 'cache_read_input_tokens' | 'cache_creation_input_tokens', v: unknown): void => {
    const x = n(v);
    if (x !== undefined) out[key] = x;
  };
  set('input_tokens', raw.input_tokens);
  set('output_tokens', raw.output_tokens);
  set('cache_read_input_tokens', raw.cache_read_input_tokens);
  set('cache_creation_input_tokens', raw.cache_creation_input_tokens);
  if (isRecord(raw.cache_creation)) {
    out.cache_creation_5m = n(raw.cache_creation.ephemeral_5m_input_tokens) ?? 0;
    out.cache_creation_1h = n(raw.cache_creation.ephemeral_1h_input_tokens) ?? 0;
  } else if (out.cache_creation_input_tokens !== undefined && !partial) {
    out.cache_creation_5m = out.cache_creation_input_tokens;
    out.cache_creation_1h = 0;
  }
  const details = isRecord(raw.output_tokens_details) ? raw.output_tokens_details : null;
  const reasoning = details ? n(details.thinking_tokens) : undefined;
  if (reasoning !== undefined) out.reasoning_tokens = reasoning;
  // Server tools bill per use: web searches at the catalog's web_search price.
  const searches = isRecord(raw.server_tool_use) ? n(raw.server_tool_use.web_search_requests) : undefined;
  if (searches !== undefined) out.web_search_requests = searches;
  if (typeof raw.service_tier === 'string') out.service_tier = raw.service_tier;
  return out;
}

export function encodeMessagesResponse(res: CanonicalResponse): Rec {
  return {
    id: res.id,
    type: 'message',
    role: 'assistant',
    model: res.model,
    content: res.content.map(encodeBlock),
    stop_reason: res.stop_reason,
    stop_sequence: res.stop_sequence,
    usage: anthropicUsage(res.usage),
  };
}

/** Blocks the canonical model cannot hold (server tool results, etc.) are skipped. */
export function decodeMessagesResponse(body: unknown): CanonicalResponse {
  const b = isRecord(body) ? body : {};
  return {
    id: typeof b.id === 'string' ? b.id : '',
    model: typeof b.model === 'string' ? b.model : '',
    content: decodeBlocks(b.content, 'content', true),
    stop_reason: stopReasonOf(b.stop_reason),
    stop_sequence: typeof b.stop_sequence === 'string' ? b.stop_sequence : null,
    usage: { ...emptyUsage(), ...decodeUsage(b.usage) },
  };
}
