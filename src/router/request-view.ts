// What the router reads from a request before ranking: the prompt's parts (for token counts), the
// quality model's features, the capabilities it needs, and the policy context (`request.*`, `key.*`).
import type { CanonicalRequest } from '../formats/canonical.ts';
import { reasoningAsk } from '../formats/reasoning.ts';
import { MANY_TOOLS } from '../formats/tool-count.ts';
import { toolsInContext } from '../formats/tool-search.ts';
import { offeredTools } from '../formats/tool-changes.ts';
import type { KeyRecord } from '../store/types.ts';
import { promptParts, type PromptParts } from '../tokens/index.ts';
import { extractPromptFeatures, type PromptFeatures } from './quality/index.ts';
import type { RouterParams } from './params.ts';

/**
 * `manyTools`: more than MANY_TOOLS tools in the model's context (src/formats/tool-count.ts);
 * `mcpToolChanges`: a tool change names an Anthropic MCP tool, which only Anthropic's Messages reads;
 * `responsesApi`: the request holds what only a server of the Responses API reads (hosted-tool items:
 * src/formats/openai-responses/native-only.ts), so only a candidate relaying that API natively takes it;
 * `chatApi`: a chat request asks for what only an OpenAI chat-completions server answers (log
 * probabilities, an audio answer, web search, legacy functions: CanonicalRequest.native_only);
 * `messagesApi`: a Messages request asks for what only Anthropic's Messages API acts on (a continued
 * `thread`, `compaction`, `mcp_servers`: CanonicalRequest.native_only).
 */
export type Needs = { tools: boolean; manyTools: boolean; mcpToolChanges: boolean; vision: boolean; jsonSchema: boolean; reasoning: boolean; responsesApi: boolean; chatApi: boolean; messagesApi: boolean };

export type RequestView = {
  parts: PromptParts;
  features: PromptFeatures;
  needs: Needs;
  /** What only a server of the client's format reads, as `input[2] web_search_call` (the exclusion's reason); mostly empty. */
  nativeOnly: readonly string[];
  /** max_tokens / max_completion_tokens the client set, else null. */
  clientMaxTokens: number | null;
  /** The request asks for prompt caching explicitly (cache_control somewhere). */
  cacheControl: boolean;
  /** `request`, `key` and `extra` for policy rules; `candidate` is added per candidate. Made on first read. */
  readonly policyData: Record<string, unknown>;
};

function textOf(blocks: CanonicalRequest['messages'][number]['content']): string {
  let s = '';
  for (const b of blocks) {
    if (b.type === 'text') s += (s ? '\n' : '') + b.text;
    else if (b.type === 'tool_result') for (const c of b.content) if (c.type === 'text') s += (s ? '\n' : '') + c.text;
  }
  return s;
}

const NONE: readonly string[] = Object.freeze([]);

/**
 * `nativeOnly`: what of the request only a server of the client's format reads (ClientCodec.readForRanking,
 * and an ask only that format answers: CanonicalRequest.native_only), `format` the client's: a Responses
 * request holding any goes to candidates that serve the Responses API natively, a chat request to those
 * that serve chat completions natively.
 */
export function viewRequest(req: CanonicalRequest, params: RouterParams, key: KeyRecord | null, route: string, metadata: Record<string, unknown> | null, nativeOnly: readonly string[] = NONE, format = 'openai-responses'): RequestView {
  const parts = promptParts(req);
  let cacheControl = req.system.some((b) => b.cache_control !== undefined) || (req.tools ?? []).some((t) => t.cache_control !== undefined);
  let toolTurns = false;
  for (const m of req.messages) {
    for (const b of m.content) {
      if ('cache_control' in b && b.cache_control !== undefined) cacheControl = true;
      if (b.type === 'tool_use' || b.type === 'tool_result') toolTurns = true;
    }
  }
  // Thinking asked for (enabled or adaptive, or an effort other than none) needs a model that reasons; disabled thinking needs none.
  const ask = reasoningAsk(req);
  // Tools added or removed mid-conversation count as the targets get them: those offered at the end.
  const offered = offeredTools(req);
  const tools = offered?.length ?? 0;
  const needs: Needs = {
    tools: tools > 0 || toolTurns,
    // Deferred tools a client-side search has not loaded are not declared to any target.
    manyTools: toolsInContext(req, offered).length > MANY_TOOLS,
    mcpToolChanges: req.mcp_tool_change !== undefined,
    // A binary document (a PDF) is read as pages of images and text: every provider that takes one takes images.
    vision: parts.imageSizes.length > 0 || parts.documents.length > 0,
    jsonSchema: req.response_format?.type === 'json_schema',
    reasoning: ask !== null && ask.kind !== 'off',
    responsesApi: nativeOnly.length > 0 && format === 'openai-responses',
    chatApi: nativeOnly.length > 0 && format === 'openai-chat',
    messagesApi: nativeOnly.length > 0 && format === 'anthropic-messages',
  };
  const features = extractPromptFeatures({
    system: req.system.map((b) => b.text).join('\n'),
    turns: req.messages.map((m) => textOf(m.content)),
    tools,
    images: parts.imageSizes.length,
    jsonOutput: req.response_format !== undefined && req.response_format.type !== 'text',
  });
  return new View(parts, features, needs, nativeOnly, cacheControl, req, params, key, route, metadata);
}

/**
 * The view, with its policy context (`request.*`, `key.*`, `extra`) made on first read: a decision
 * reads it only for a rule with a `when`, a rule on per-request figures or request.input_tokens;
 * made for every request, its five objects were most of the view's allocation.
 */
class View implements RequestView {
  readonly parts: PromptParts;
  readonly features: PromptFeatures;
  readonly needs: Needs;
  readonly nativeOnly: readonly string[];
  readonly cacheControl: boolean;
  readonly clientMaxTokens: number | null;
  readonly #req: CanonicalRequest;
  readonly #params: RouterParams;
  readonly #key: KeyRecord | null;
  readonly #route: string;
  readonly #metadata: Record<string, unknown> | null;
  #policyData: Record<string, unknown> | null = null;

  constructor(parts: PromptParts, features: PromptFeatures, needs: Needs, nativeOnly: readonly string[], cacheControl: boolean, req: CanonicalRequest, params: RouterParams, key: KeyRecord | null, route: string, metadata: Record<string, unknown> | null) {
    this.parts = parts; this.features = features; this.needs = needs; this.nativeOnly = nativeOnly; this.cacheControl = cacheControl;
    this.clientMaxTokens = req.max_tokens ?? null;
    this.#req = req; this.#params = params; this.#key = key; this.#route = route; this.#metadata = metadata;
  }

  get policyData(): Record<string, unknown> {
    if (this.#policyData) return this.#policyData;
    const { features, parts, needs } = this;
    const req = this.#req, params = this.#params, key = this.#key;
    const keyTags = (key as { tags?: Record<string, string> } | null)?.tags ?? {};
    return this.#policyData = {
      request: {
        input_tokens: features.stats.tokens, tools: features.stats.tools, images: parts.imageSizes.length,
        json_output: req.response_format !== undefined && req.response_format.type !== 'text', json_schema: needs.jsonSchema,
        stream: req.stream, kind: features.kind, messages: req.messages.length, reasoning: needs.reasoning,
        max_output_tokens: req.max_tokens ?? null, max_cost: params.maxCost, max_cost_per_million_tokens: params.maxCostPerMillion,
        willingness_to_pay: params.wtp, route: this.#route, metadata: this.#metadata ?? {}, extra: params.extra,
      },
      key: { id: key?.id ?? null, name: key?.name ?? null, tags: keyTags },
      extra: params.extra,
      candidate: null,
    };
  }
}
