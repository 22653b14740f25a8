// Client side of the chat-completions codec: a validated request body -> CanonicalRequest.
// Router fields (models, max_cost, ...) and `extra` are the engine's business and are not read here.
import type {
  Block, CacheControl, CanonicalRequest, ImageBlock, Message, ResponseFormat, TextBlock, Tool, ToolChoice, ToolResultBlock,
} from '../canonical.ts';
import { isImageDetail } from '../canonical.ts';
import { GatewayError } from '../../gateway-error.ts';
import { isRecord } from '../errors.ts';
import { callSignature } from './thought-signatures.ts';
import { toolInput } from '../tool-arguments.ts';

type Rec = Record<string, unknown>;
const unsupported = (param: string, message: string): GatewayError =>
  new GatewayError('unsupported_parameter', message, { param });

/** `data:<media>;base64,<payload>` -> its parts; anything else is a plain URL. */
export function parseDataUrl(url: string): { media_type: string; data: string } | null {
  const m = /^data:([^;,]+)((?:;[^;,]+)*);base64,(.*)$/s.exec(url);
  return m ? { media_type: m[1]!, data: m[3]! } : null;
}

/** An image by URL or data: URL, with the client's `detail` where it gave one (validated upstream of here). */
export function imageFromUrl(url: string, detail?: unknown): ImageBlock {
  const d = parseDataUrl(url);
  const b: ImageBlock = { type: 'image', source: d ? { type: 'base64', ...d } : { type: 'url', url } };
  if (isImageDetail(detail)) b.detail = detail;
  return b;
}

/** Text-only content (system, developer, tool messages): string or array of text parts. */
function textOf(content: unknown, param: string): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p: Rec, i) => {
    if (p.type !== 'text' && p.type !== 'refusal') throw unsupported(`${param}[${i}].type`, `only text parts are allowed here, got '${String(p.type)}'`);
    return String(p.text ?? p.refusal ?? '');
  }).join('');
}

/**
 * An explicit prompt-cache breakpoint on a content part (`prompt_cache_breakpoint: {mode: explicit, ttl}`,
 * OpenAI's caching from gpt-5.6): "cache the prompt up to here", which is what Anthropic's `cache_control`
 * on a block says, so it becomes the canonical marker (Anthropic's `cache_control`, Bedrock's `cachePoint`);
 * OpenAI's 12h lifetime as Anthropic's longest, 1h, its 30m as the default. Counted in `marks`.
 */
function breakpointOf(p: unknown, marks: { n: number }): CacheControl | undefined {
  const b = isRecord(p) ? p.prompt_cache_breakpoint : undefined;
  if (!isRecord(b) || b.mode !== 'explicit') return undefined;
  marks.n++;
  return b.ttl === '12h' ? { type: 'ephemeral', ttl: '1h' } : { type: 'ephemeral' };
}

/** The last breakpoint among a text-only message's parts (they become one block). */
function lastBreakpoint(content: unknown, marks: { n: number }): CacheControl | undefined {
  let cc: CacheControl | undefined;
  if (Array.isArray(content)) for (const p of content) cc = breakpointOf(p, marks) ?? cc;
  return cc;
}

function withMark<B extends Block>(b: B, cc: CacheControl | undefined): B {
  if (cc !== undefined && 'cache_control' in b === false) (b as B & { cache_control?: CacheControl }).cache_control = cc;
  return b;
}

function userBlocks(content: unknown, param: string, marks: { n: number }): Block[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return [];
  return content.map((p: Rec, i): Block => withMark(userBlock(p, `${param}[${i}]`), breakpointOf(p, marks)));
}

function userBlock(p: Rec, at: string): Block {
  if (p.type === 'text') return { type: 'text', text: String(p.text) };
  if (p.type === 'image_url') return imageFromUrl(String((p.image_url as Rec).url), (p.image_url as Rec).detail);
  if (p.type === 'file') {
    // Inline file data is a document the canonical model can carry; uploaded file ids are not.
    const f = isRecord(p.file) ? p.file : {};
    const d = typeof f.file_data === 'string' ? parseDataUrl(f.file_data) : null;
    if (!d) throw unsupported(`${at}.file`, 'only inline file_data (a base64 data: URL) is supported; file_id references are not');
    const doc: Block = { type: 'document', source: { type: 'base64', ...d } };
    if (typeof f.filename === 'string') doc.title = f.filename;
    return doc;
  }
  throw unsupported(`${at}.type`, `content part type '${String(p.type)}' is not supported by this gateway`);
}

function toolUses(calls: Rec[]): Block[] {
  return calls.flatMap((c: Rec): Block[] => {
    const fn = c.function as Rec;
    // Arguments a model wrote that are no object's JSON are history OpenAI accepts: kept as written (tool-arguments.ts).
    return [...callSignature(c), { type: 'tool_use', id: String(c.id), name: String(fn.name), ...toolInput(String(fn.arguments ?? '')) }];
  });
}

/** Appends to the last turn when it has the same role: tool results and a following user message share one turn. */
function pushTurn(messages: Message[], role: Message['role'], content: Block[]): void {
  const last = messages.at(-1);
  if (last && last.role === role) last.content.push(...content);
  else messages.push({ role, content });
}

function decodeMessages(raw: Rec[], marks: { n: number }): { system: TextBlock[]; messages: Message[] } {
  const system: TextBlock[] = [];
  const messages: Message[] = [];
  raw.forEach((m, i) => {
    const at = `messages[${i}]`;
    switch (m.role) {
      case 'system':
      case 'developer':
        // Hoisted wherever they appear: the canonical model has one system prompt.
        system.push(withMark<TextBlock>({ type: 'text', text: textOf(m.content, `${at}.content`) }, lastBreakpoint(m.content, marks)));
        return;
      case 'user':
        return pushTurn(messages, 'user', userBlocks(m.content, `${at}.content`, marks));
      case 'assistant': {
        const blocks: Block[] = [];
        const text = m.content == null ? '' : textOf(m.content, `${at}.content`);
        if (text !== '') blocks.push(withMark<TextBlock>({ type: 'text', text }, lastBreakpoint(m.content, marks)));
        if (Array.isArray(m.tool_calls)) blocks.push(...toolUses(m.tool_calls));
        return pushTurn(messages, 'assistant', blocks);
      }
      case 'tool': {
        const result: ToolResultBlock = withMark<ToolResultBlock>({
          type: 'tool_result', tool_use_id: String(m.tool_call_id),
          content: [{ type: 'text', text: textOf(m.content, `${at}.content`) }],
        }, lastBreakpoint(m.content, marks));
        return pushTurn(messages, 'user', [result]);
      }
      default:
        throw unsupported(`${at}.role`, `role '${String(m.role)}' is not supported; use tools and tool messages`);
    }
  });
  return { system, messages };
}

function decodeTools(tools: Rec[]): Tool[] {
  return tools.map((t, i) => {
    if (t.type !== 'function') throw unsupported(`tools[${i}].type`, 'only function tools are supported');
    const fn = t.function as Rec;
    const tool: Tool = { name: String(fn.name), input_schema: isRecord(fn.parameters) ? fn.parameters : { type: 'object', properties: {} } };
    if (typeof fn.description === 'string') tool.description = fn.description;
    if (typeof fn.strict === 'boolean') tool.strict = fn.strict;
    return tool;
  });
}

function decodeToolChoice(tc: unknown, parallel: unknown): ToolChoice | undefined {
  let choice: ToolChoice | undefined;
  if (tc === 'none' || tc === 'auto') choice = { type: tc };
  else if (tc === 'required') choice = { type: 'any' };
  else if (isRecord(tc) && isRecord(tc.function)) choice = { type: 'tool', name: String(tc.function.name) };
  if (parallel === false) choice = { ...(choice ?? { type: 'auto' }), disable_parallel_tool_use: true };
  return choice;
}

function decodeResponseFormat(rf: Rec): ResponseFormat {
  if (rf.type === 'json_schema') {
    const js = rf.json_schema as Rec;
    const out: ResponseFormat = { type: 'json_schema', name: String(js.name), schema: isRecord(js.schema) ? js.schema : {} };
    if (typeof js.strict === 'boolean') out.strict = js.strict;
    if (typeof js.description === 'string') out.description = js.description;
    return out;
  }
  return { type: rf.type === 'json_object' ? 'json_object' : 'text' };
}

/**
 * Asks only an OpenAI chat-completions server answers, none with a stand-in elsewhere: log
 * probabilities, a spoken (audio) answer, a web search before answering, and legacy function calling
 * (`functions`, read back as `message.function_call`, which no translated answer carries). Each
 * changes the answer, so a request translated for another format is refused naming the field
 * (CanonicalRequest.native_only), never answered without it; a relay sends it as it came. Asked off
 * (logprobs false, text-only modalities, no functions) they are nothing.
 */
function openAIOnly(body: Rec): CanonicalRequest['native_only'] {
  const only = (param: string, what: string): NonNullable<CanonicalRequest['native_only']> =>
    ({ param, message: `'${param}' (${what}) is answered only by an OpenAI chat-completions server, and this model is reached by translation; send the request without '${param}'` });
  if (body.logprobs === true) return only('logprobs', 'log probabilities of the output tokens');
  if (typeof body.top_logprobs === 'number' && body.top_logprobs > 0) return only('top_logprobs', 'log probabilities of the output tokens');
  if (Array.isArray(body.modalities) && body.modalities.includes('audio')) return only('modalities', 'an audio answer');
  if (isRecord(body.audio)) return only('audio', 'an audio answer');
  if (body.web_search_options !== undefined && body.web_search_options !== null) return only('web_search_options', 'a web search');
  if (Array.isArray(body.functions) && body.functions.length > 0) return only('functions', "legacy function calling; declare them in 'tools'");
  if (isRecord(body.function_call)) return only('function_call', "legacy function calling; use 'tool_choice'");
  const i = (body.messages as Rec[]).findIndex((m) => isRecord(m.function_call));
  return i < 0 ? undefined : only(`messages[${i}].function_call`, "a legacy function call; send it in 'tool_calls'");
}

/** Body must have passed validateChatRequest; throws GatewayError for what cannot be represented. */
export function decodeChatRequest(body: Rec): CanonicalRequest {
  const marks = { n: 0 };
  const { system, messages } = decodeMessages(body.messages as Rec[], marks);
  const req: CanonicalRequest = { model: String(body.model), system, messages, stream: body.stream === true };
  const reported = [
    ...(marks.n > 0 ? [`prompt_cache_breakpoint->cache_control(${marks.n})`] : []),
    // OpenAI's own services around the answer, which no other format has: reported, not sent.
    ...(['moderation', 'prediction', 'prompt_cache_options'] as const).filter((k) => body[k] !== undefined && body[k] !== null).map((k) => `${k}=dropped`),
    ...(body.store === true ? ['store=dropped'] : []),
  ];
  if (reported.length > 0) req.decode_adjustments = reported;
  const native = openAIOnly(body);
  if (native) req.native_only = native;
  const maxTokens = body.max_completion_tokens ?? body.max_tokens;
  if (typeof maxTokens === 'number') req.max_tokens = maxTokens;
  if (body.stream === true && isRecord(body.stream_options) && body.stream_options.include_usage === true) req.stream_include_usage = true;
  for (const k of ['temperature', 'top_p', 'frequency_penalty', 'presence_penalty', 'seed'] as const) {
    if (typeof body[k] === 'number') req[k] = body[k];
  }
  if (typeof body.stop === 'string') req.stop = [body.stop];
  else if (Array.isArray(body.stop)) req.stop = body.stop.map(String);
  if (Array.isArray(body.tools) && body.tools.length > 0) req.tools = decodeTools(body.tools);
  const choice = decodeToolChoice(body.tool_choice, body.parallel_tool_calls);
  if (choice) req.tool_choice = choice;
  if (typeof body.parallel_tool_calls === 'boolean') req.parallel_tool_calls = body.parallel_tool_calls;
  if (isRecord(body.response_format)) req.response_format = decodeResponseFormat(body.response_format);
  if (typeof body.reasoning_effort === 'string') req.reasoning_effort = body.reasoning_effort as NonNullable<CanonicalRequest['reasoning_effort']>;
  if (typeof body.verbosity === 'string') req.verbosity = body.verbosity as NonNullable<CanonicalRequest['verbosity']>;
  if (isRecord(body.logit_bias)) req.logit_bias = body.logit_bias as Record<string, number>;
  const user = body.safety_identifier ?? body.user;
  if (typeof user === 'string') req.user = user;
  if (isRecord(body.metadata)) req.metadata = body.metadata as Record<string, string>;
  if (typeof body.service_tier === 'string') req.service_tier = body.service_tier;
  if (typeof body.prompt_cache_key === 'string') req.prompt_cache_key = body.prompt_cache_key;
  if (body.prompt_cache_retention === 'in_memory' || body.prompt_cache_retention === '24h') req.prompt_cache_retention = body.prompt_cache_retention;
  return req;
}
