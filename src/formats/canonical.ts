// The one canonical model of requests, responses and stream events that sits between codecs.
// Shaped after the Anthropic Messages model (the richest of the formats); OpenAI-only knobs ride along.
import type { ErrorKind } from '../gateway-error.ts';

export type CacheControl = { type: 'ephemeral'; ttl?: '5m' | '1h' };

export type ImageSource =
  | { type: 'base64'; media_type: string; data: string }
  | { type: 'url'; url: string };

export type DocumentSource =
  | { type: 'base64'; media_type: string; data: string }
  | { type: 'url'; url: string }
  | { type: 'text'; media_type: 'text/plain'; data: string };

export type TextBlock = { type: 'text'; text: string; cache_control?: CacheControl };
/**
 * OpenAI's image `detail` (chat `image_url.detail`, Responses `input_image.detail`): how finely the
 * model looks, and so what the image is billed. Carried to OpenAI-format targets; the other formats
 * have no such knob and drop it.
 */
export const IMAGE_DETAILS = ['auto', 'low', 'high', 'original'] as const;
export type ImageDetail = typeof IMAGE_DETAILS[number];
export const isImageDetail = (v: unknown): v is ImageDetail => typeof v === 'string' && (IMAGE_DETAILS as readonly string[]).includes(v);

export type ImageBlock = { type: 'image'; source: ImageSource; detail?: ImageDetail; cache_control?: CacheControl };
/**
 * `title` and `context`: Anthropic shows both to the model with the document; targets without such
 * fields get them as text before it: `label`, set for those targets only (src/formats/document-labels.ts),
 * which their encoders write as a text part just before the document. A document may also sit in a tool
 * result (a tool that fetched a file).
 */
export type DocumentBlock = {
  type: 'document'; source: DocumentSource; title?: string; context?: string; cache_control?: CacheControl;
  label?: string;
};
/**
 * `raw_arguments`: arguments a model wrote as text that is no object's JSON (OpenAI's formats carry them
 * as text), kept to be given back as written; `input` is then {} (src/formats/tool-arguments.ts).
 */
export type ToolUseBlock = { type: 'tool_use'; id: string; name: string; input: unknown; raw_arguments?: string; cache_control?: CacheControl };
/**
 * A tool a tool result makes available (client-side tool search: the tool's definition, deferred with
 * `defer_loading`, is loaded from here on). Only Anthropic's Messages reads it; src/formats/tool-search.ts
 * turns it into text, and the tool into a declared one, for every other target.
 */
export type ToolReferenceBlock = { type: 'tool_reference'; tool_name: string; cache_control?: CacheControl };
export type ToolResultBlock = {
  type: 'tool_result'; tool_use_id: string; content: Array<TextBlock | ImageBlock | DocumentBlock | ToolReferenceBlock>; is_error?: boolean;
  cache_control?: CacheControl;
};
export type ThinkingBlock = { type: 'thinking'; thinking: string; signature: string };
export type RedactedThinkingBlock = { type: 'redacted_thinking'; data: string };

/**
 * The tool a tool change names: one in `tools` or defined by an earlier addition (`tool_reference`),
 * a whole tools entry (`tool_definition`), or a tool or toolset of Anthropic's server-side MCP
 * connector (the `mcp_*` kinds, which only Anthropic runs).
 */
export type ToolChangeTarget =
  | { type: 'tool_reference'; name: string }
  | { type: 'tool_definition'; definition: Tool }
  | { type: 'mcp_tool_reference'; server_name: string; name: string }
  | { type: 'mcp_toolset_reference'; server_name: string };

/**
 * A mid-conversation tool change, in a system turn (Anthropic's `mid-conversation-tool-changes`
 * beta): the tool is offered to the model from that point on (`tool_addition`) or no longer is
 * (`tool_removal`), the `tools` list left as it is so the prompt cache holds. Only Anthropic's
 * Messages reads them; src/formats/tool-changes.ts lowers them into the tool list for other targets.
 */
export type ToolChangeBlock = { type: 'tool_addition' | 'tool_removal'; tool: ToolChangeTarget; cache_control?: CacheControl };

export type Block =
  | TextBlock | ImageBlock | DocumentBlock | ToolUseBlock | ToolResultBlock | ThinkingBlock | RedactedThinkingBlock | ToolChangeBlock;

/**
 * One turn. `system` turns are instructions given mid-conversation (the Messages API accepts a
 * `role: "system"` message right after a user turn); they hold text blocks and tool changes only,
 * and may set the effort of the turns after them (`effort`, Anthropic's per-message
 * `output_config.effort`). The leading system prompt stays in CanonicalRequest.system.
 */
export type Message = { role: 'user' | 'assistant' | 'system'; content: Block[]; effort?: ReasoningEffort };

/** `defer_loading`: left out of the model's context until a tool_reference loads it (src/formats/tool-search.ts). */
export type Tool = { name: string; description?: string; input_schema: Record<string, unknown>; strict?: boolean; defer_loading?: boolean; cache_control?: CacheControl };

export type ToolChoice =
  | { type: 'auto' | 'any' | 'none'; disable_parallel_tool_use?: boolean }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean };

export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: Record<string, unknown>; strict?: boolean; description?: string };

/** How thinking text is shown: `omitted` returns signed thinking blocks without their text. */
export type ThinkingDisplay = 'summarized' | 'omitted';

/**
 * `enabled` asks for a fixed budget; `adaptive` lets the model decide how much to think (its depth
 * steered by `reasoning_effort`); `disabled` turns thinking off.
 */
export type Thinking =
  | { type: 'enabled'; budget_tokens: number; display?: ThinkingDisplay }
  | { type: 'adaptive'; display?: ThinkingDisplay }
  | { type: 'disabled' };

/** Reasoning effort, the union of OpenAI's `reasoning_effort` and Anthropic's `output_config.effort`. */
export type ReasoningEffort = 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh' | 'max';

/**
 * Anthropic context editing (`context_management.edits`): targets that hold no server-side
 * context get the edits applied by the gateway to the history it forwards (src/formats/context-edits.ts).
 */
export type ContextEdit =
  | { type: 'clear_thinking'; keep: number | 'all' }
  | {
    type: 'clear_tool_uses'; trigger?: { type: 'input_tokens' | 'tool_uses'; value: number };
    keep?: number; clear_at_least?: number; exclude_tools?: string[]; clear_tool_inputs?: boolean | string[];
  }
  | { type: 'other'; name: string };

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
  reasoning_effort?: ReasoningEffort;
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
  /**
   * OpenAI's prompt cache routing (`prompt_cache_key`, chat and Responses alike) and how long a cached
   * prefix is kept (`prompt_cache_retention`): what the cache hits, so what the input is billed. Carried
   * to OpenAI-format targets; the others cache by their own markers and drop them (reported).
   */
  prompt_cache_key?: string;
  prompt_cache_retention?: 'in_memory' | '24h';
  /** Anthropic-only: a code-execution container; codecs for other targets drop it (reported). */
  container?: unknown;
  /** Anthropic's `context_management` as sent (relayed to Anthropic targets) and its edits, parsed. */
  context_management?: unknown;
  context_edits?: ContextEdit[];
  /**
   * Where the first tool change naming an MCP tool or toolset is (`messages[i].content[j].tool`): those
   * name Anthropic's server-side MCP connector, which targets of other formats refuse, naming this field.
   */
  mcp_tool_change?: string;
  /**
   * What the client asked for that only a server of its own format answers (log probabilities, an
   * audio answer...): relayed to such a server, refused naming `param` when the request is translated.
   */
  native_only?: { param: string; message: string };
  /** What decoding the client's request left out or changed (e.g. hosted tools no target runs), for x-gateway-adjustments. */
  decode_adjustments?: string[];
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
  /** Server-side web searches the call ran (billed per search: the catalog's `web_search` price). */
  web_search_requests?: number;
  /** Audio tokens, already included in input_tokens / output_tokens (billed at audio prices when listed). */
  audio_input_tokens?: number;
  audio_output_tokens?: number;
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

/** Error categories, defined with the error type (src/gateway-error.ts). */
export type { ErrorKind };
