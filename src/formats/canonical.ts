// The one canonical model of requests, responses and stream events that sits between codecs.
// Shaped after the Anthropic Messages model (the richest of the formats); OpenAI-only knobs ride along.

export type CacheControl = { type: 'ephemeral'; ttl?: '5m' | '1h' };

export type ImageSource =
  | { type: 'base64'; media_type: string; data: string }
  | { type: 'url'; url: string };

export type DocumentSource =
  | { type: 'base64'; media_type: string; data: string }
  | { type: 'url'; url: string }
  | { type: 'text'; media_type: 'text/plain'; data: string };

export type TextBlock = { type: 'text'; text: string; cache_control?: CacheControl };
export type ImageBlock = { type: 'image'; source: ImageSource; cache_control?: CacheControl };
export type DocumentBlock = {
  type: 'document'; source: DocumentSource; title?: string; context?: string; cache_control?: CacheControl;
};
export type ToolUseBlock = { type: 'tool_use'; id: string; name: string; input: unknown; cache_control?: CacheControl };
export type ToolResultBlock = {
  type: 'tool_result'; tool_use_id: string; content: Array<TextBlock | ImageBlock>; is_error?: boolean;
  cache_control?: CacheControl;
};
export type ThinkingBlock = { type: 'thinking'; thinking: string; signature: string };
export type RedactedThinkingBlock = { type: 'redacted_thinking'; data: string };

export type Block =
  | TextBlock | ImageBlock | DocumentBlock | ToolUseBlock | ToolResultBlock | ThinkingBlock | RedactedThinkingBlock;

export type Message = { role: 'user' | 'assistant'; content: Block[] };

export type Tool = { name: string; description?: string; input_schema: Record<string, unknown>; strict?: boolean; cache_control?: CacheControl };

export type ToolChoice =
  | { type: 'auto' | 'any' | 'none'; disable_parallel_tool_use?: boolean }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean };

export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: Record<string, unknown>; strict?: boolean; description?: string };

export type Thinking = { type: 'enabled'; budget_tokens: number } | { type: 'disabled' };

/** A request in canonical form. `model` is the upstream model name once the engine has picked a target. */
export type CanonicalRequest = {
  model: string;
  system: TextBlock[];
  messages: Message[];
  max_tokens?: number;
  temperature?: number;
  top_p?: number;
  top_k?: number;
  stop?: string[];
  stream: boolean;
  /** Client asked for usage in the stream (OpenAI `stream_options.include_usage`). */
  stream_include_usage?: boolean;
  tools?: Tool[];
  tool_choice?: ToolChoice;
  parallel_tool_calls?: boolean;
  thinking?: Thinking;
  reasoning_effort?: 'minimal' | 'low' | 'medium' | 'high';
  response_format?: ResponseFormat;
  frequency_penalty?: number;
  presence_penalty?: number;
  logit_bias?: Record<string, number>;
  seed?: number;
  verbosity?: 'low' | 'medium' | 'high';
  /** End-user id (OpenAI `safety_identifier`/`user`, Anthropic `metadata.user_id`). */
  user?: string;
  /** Free-form request metadata (OpenAI `metadata`). */
  metadata?: Record<string, string>;
  service_tier?: string;
  /** Anthropic-only features; codecs for other targets refuse them with a 400. */
  container?: unknown;
  context_management?: unknown;
};

export type StopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'pause_turn' | 'refusal';

/**
 * Token usage. `input_tokens` counts uncached input only (Anthropic semantics); cached reads and
 * cache writes are separate, so total prompt tokens = input + cache_read + cache_creation.
 */
export type Usage = {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
  cache_creation_5m: number;
  cache_creation_1h: number;
  /** Reasoning tokens, already included in output_tokens. */
  reasoning_tokens: number;
  service_tier?: string;
};

export const emptyUsage = (): Usage => ({
  input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0,
  cache_creation_5m: 0, cache_creation_1h: 0, reasoning_tokens: 0,
});

/**
 * Folds a partial usage (as stream events carry it: running totals, field by field) into `into`,
 * creating it on first use.
 */
export function mergeUsage(into: Usage | null, part: Partial<Usage>): Usage {
  const u = into ?? emptyUsage();
  for (const [k, v] of Object.entries(part)) if (v !== undefined) (u as Record<string, unknown>)[k] = v;
  return u;
}

export type CanonicalResponse = {
  id: string;
  model: string;
  content: Block[];
  stop_reason: StopReason | null;
  stop_sequence: string | null;
  usage: Usage;
};

export type BlockDelta =
  | { type: 'text_delta'; text: string }
  | { type: 'input_json_delta'; partial_json: string }
  | { type: 'thinking_delta'; thinking: string }
  | { type: 'signature_delta'; signature: string };

/** Canonical stream events (the Anthropic event model). Blocks in block_start carry empty text/input. */
export type StreamEvent =
  | { type: 'message_start'; id: string; model: string; usage: Partial<Usage> }
  | { type: 'block_start'; index: number; block: Block }
  | { type: 'block_delta'; index: number; delta: BlockDelta }
  | { type: 'block_stop'; index: number }
  | { type: 'message_delta'; stop_reason: StopReason | null; stop_sequence: string | null; usage: Partial<Usage> }
  | { type: 'message_stop' }
  | { type: 'ping' }
  | { type: 'error'; error: { type: ErrorKind; message: string } };

/** Error categories shared by every format; each client format renders them in its own envelope. */
export type ErrorKind =
  | 'invalid_request' | 'authentication' | 'permission' | 'not_found' | 'request_too_large'
  | 'rate_limit' | 'api_error' | 'overloaded' | 'timeout' | 'not_implemented';
