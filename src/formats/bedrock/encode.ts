// Canonical request -> Bedrock Converse / ConverseStream body and path.
// Rules that are not a plain rename:
// - cache_control on a system block, content block or tool puts a `cachePoint {type: default}`
//   right after it: the same "cache everything up to here" meaning as an Anthropic breakpoint.
//   A `ttl` of 1h is sent as the cachePoint's `ttl` (CachePointBlock accepts 5m | 1h).
// - Consecutive messages of one role are merged: Converse insists on strict alternation.
// - Tool calls and results in a request declaring no tools (a final turn sent without them, all
//   removed mid-conversation) or with tool_choice none: Converse refuses tool blocks without toolConfig
//   and has no "none" choice, and a declared tool (a stand-in, or the client's under "auto") could be
//   called, so they are told as text in their turns (src/formats/tool-history-text.ts), images of a
//   result kept as image blocks, and tool_choice none leaves the tools out; reported.
// - response_format json_schema -> outputConfig.textFormat {type: json_schema, structure.jsonSchema
//   {name, schema as a JSON string}}; json_object (no schema) becomes an instruction (reported).
// - Reasoning: Claude models get `thinking` (and top_k) in additionalModelRequestFields in the
//   Anthropic shape, Nova models `reasoningConfig`; see reasoning() below. metadata becomes
//   requestMetadata (invocation logs). Mid-conversation system turns join `system`; context edits
//   are applied by the gateway. Only Claude's signatures go back (src/formats/signatures.ts):
//   reasoning another model signed is left out, reported.
// - Images and documents by URL cannot be sent: 400. Frequency/presence penalties, seed,
//   logit_bias, verbosity, an end-user id, a service tier, OpenAI's prompt cache key and retention
//   and a container have no Converse equivalent: dropped, each reported.
import type { Block, CanonicalRequest, DocumentBlock, ImageBlock, Message } from '../canonical.ts';
import type { EncodedRequest, TargetInfo } from '../codec.ts';
import { GatewayError } from '../../gateway-error.ts';
import { applyContextEdits } from '../context-edits.ts';
import { formatInstruction, hoistSystemTurns } from '../fallbacks.ts';
import { askedAs, claudeSampling, claudeThinkingConflict, effortForBudget, modelReasons, planClaudeThinking, reasoningAsk } from '../reasoning.ts';
import { ownThinking, signerOf } from '../signatures.ts';
import { holdsToolBlocks, toolHistoryAsText } from '../tool-history-text.ts';
import { referenceText } from '../tool-search.ts';

type Json = Record<string, unknown>;

const CACHE_POINT = { cachePoint: { type: 'default' } } as const;
const CACHE_POINT_1H = { cachePoint: { type: 'default', ttl: '1h' } } as const;
const cachePoint = (cc: { ttl?: '5m' | '1h' }): Json => (cc.ttl === '1h' ? CACHE_POINT_1H : CACHE_POINT);

const IMAGE_FORMATS: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpeg', 'image/gif': 'gif', 'image/webp': 'webp' };
const DOCUMENT_FORMATS: Record<string, string> = {
  'application/pdf': 'pdf', 'text/csv': 'csv', 'application/msword': 'doc',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'application/vnd.ms-excel': 'xls', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
  'text/html': 'html', 'text/plain': 'txt', 'text/markdown': 'md',
};

const unsupported = (param: string, why: string): GatewayError =>
  new GatewayError('unsupported_parameter', `${param} is not supported by Bedrock Converse: ${why}`, { param });

function image(b: ImageBlock): Json {
  if (b.source.type === 'url') throw unsupported('image', 'images must be sent inline (base64), not by URL');
  const format = IMAGE_FORMATS[b.source.media_type];
  if (format === undefined) throw unsupported('image', `image type ${b.source.media_type} (png, jpeg, gif and webp are)`);
  return { image: { format, source: { bytes: b.source.data } } };
}

/** Document names may hold only letters, digits, spaces, hyphens, parentheses and brackets. */
const documentName = (title: string | undefined, n: number): string => {
  const clean = (title ?? '').replace(/[^A-Za-z0-9\s\-()[\]]/g, ' ').replace(/\s+/g, ' ').trim();
  return clean === '' ? `document-${n}` : clean.slice(0, 200);
};

function document(b: DocumentBlock, n: number): Json {
  const s = b.source;
  if (s.type === 'url') throw unsupported('document', 'documents must be sent inline, not by URL');
  const format = DOCUMENT_FORMATS[s.media_type];
  if (format === undefined) throw unsupported('document', `document type ${s.media_type}`);
  const bytes = s.type === 'text' ? Buffer.from(s.data, 'utf8').toString('base64') : s.data;
  return { document: { format, name: documentName(b.title, n), source: { bytes } } };
}

function content(blocks: Block[], counter: { docs: number }): Json[] {
  const out: Json[] = [];
  for (const b of blocks) {
    switch (b.type) {
      case 'text': if (b.text !== '') out.push({ text: b.text }); break;
      case 'image': out.push(image(b)); break;
      case 'document':
        if (b.label !== undefined) out.push({ text: b.label });
        out.push(document(b, ++counter.docs));
        break;
      case 'tool_use': out.push({ toolUse: { toolUseId: b.id, name: b.name, input: b.input ?? {} } }); break;
      case 'tool_result':
        out.push({
          toolResult: {
            toolUseId: b.tool_use_id,
            // tool_reference blocks were made text before encoding (src/formats/tool-search.ts).
            // A tool's documents go in its result: Converse's ToolResultContentBlock takes them.
            content: b.content.flatMap((c) => (c.type === 'text' ? [{ text: c.text }] : c.type === 'image' ? [image(c)]
              : c.type === 'document' ? [...(c.label !== undefined ? [{ text: c.label }] : []), document(c, ++counter.docs)]
              : [{ text: referenceText(c.tool_name) }])),
            status: b.is_error === true ? 'error' : 'success',
          },
        });
        break;
      case 'thinking':
        out.push({ reasoningContent: { reasoningText: b.signature === '' ? { text: b.thinking } : { text: b.thinking, signature: b.signature } } });
        break;
      case 'redacted_thinking': out.push({ reasoningContent: { redactedContent: b.data } }); break;
    }
    if ('cache_control' in b && b.cache_control !== undefined) out.push(cachePoint(b.cache_control));
  }
  return out;
}

function messages(list: Message[]): Json[] {
  const out: Array<{ role: Message['role']; content: Json[] }> = [];
  const counter = { docs: 0 };
  for (const m of list) {
    const c = content(m.content, counter);
    if (c.length === 0) continue;
    const last = out[out.length - 1];
    if (last !== undefined && last.role === m.role) last.content.push(...c);
    else out.push({ role: m.role, content: c });
  }
  return out;
}

/** Parameters with no Converse equivalent: hints and Anthropic-only features, left out and reported. */
function dropUnsupported(req: CanonicalRequest, adjustments: string[]): void {
  if (req.container !== undefined) adjustments.push('container=dropped(Anthropic code execution)');
  if (req.logit_bias !== undefined && Object.keys(req.logit_bias).length > 0) adjustments.push('logit_bias=dropped');
  for (const k of ['frequency_penalty', 'presence_penalty', 'seed', 'verbosity', 'user', 'service_tier', 'prompt_cache_key', 'prompt_cache_retention'] as const) {
    if (req[k] !== undefined) adjustments.push(`${k}=dropped`);
  }
}

/**
 * Whether the conversation's tool calls and results must go as text (src/formats/tool-history-text.ts),
 * reported: the request declares no tools (none sent, or all removed mid-conversation), and Converse
 * refuses tool blocks without a toolConfig; or its tool choice is none, which Converse cannot say
 * (it has no "none" choice, and with the tools declared the model could call one).
 */
function historyAsText(req: CanonicalRequest, turns: readonly Message[], adjustments: string[]): boolean {
  const noTools = (req.tools ?? []).length === 0;
  // Tools declared and callable: the blocks go as they are, and the turns need no scan.
  if ((!noTools && req.tool_choice?.type !== 'none') || !holdsToolBlocks(turns)) return false;
  adjustments.push(noTools
    ? 'tool_history=text(no tools declared: Converse needs toolConfig with tool blocks)'
    : 'tool_history=text(tool_choice none: Converse has no "none" choice and needs the tools with tool blocks)');
  return true;
}

/** The toolConfig; none with tool_choice none (the tools left out: any tool blocks went as text, historyAsText). */
function toolConfig(req: CanonicalRequest): Json | undefined {
  const tools = req.tools ?? [];
  if (tools.length === 0) return undefined;
  const tc = req.tool_choice;
  if (tc?.type === 'none') return undefined;
  const specs: Json[] = [];
  for (const t of tools) {
    specs.push({ toolSpec: { name: t.name, ...(t.description !== undefined ? { description: t.description } : {}), inputSchema: { json: t.input_schema } } });
    if (t.cache_control !== undefined) specs.push(cachePoint(t.cache_control));
  }
  const choice = tc === undefined ? undefined : tc.type === 'tool' ? { tool: { name: tc.name } } : tc.type === 'any' ? { any: {} } : { auto: {} };
  return choice === undefined ? { tools: specs } : { tools: specs, toolChoice: choice };
}

const isClaude = (modelId: string): boolean => /anthropic\.|claude/.test(modelId);
const isNova = (modelId: string): boolean => /amazon\.nova/.test(modelId);

/** Nova's reasoningConfig takes low, medium or high. */
const NOVA_EFFORT = { minimal: 'low', low: 'low', medium: 'medium', high: 'high', xhigh: 'high', max: 'high' } as const;

/**
 * The reasoning ask for the model behind the id: Claude models get Anthropic's thinking (the
 * same rules as on Anthropic: fitted under maxTokens, dropped with a forced tool choice or a tool
 * loop without signed thinking, sampling it refuses left out); Nova models a reasoningConfig;
 * other models (or models that do not reason, per the catalog) nothing, reported.
 */
function reasoning(req: CanonicalRequest, target: TargetInfo, messages: readonly Message[], inference: Json, extra: Json, adjustments: string[]): void {
  const sampling = { temperature: req.temperature, top_p: req.top_p, top_k: req.top_k };
  if (isClaude(target.upstreamModel)) {
    const plan = planClaudeThinking(req, target, claudeThinkingConflict(req.tool_choice, messages));
    const defaulted = req.max_tokens === undefined;
    adjustments.push(...(plan.on || !defaulted ? plan.adjustments : plan.adjustments.filter((a) => !a.startsWith('max_tokens='))));
    if (plan.on || !defaulted) inference.maxTokens = plan.maxTokens;
    if (plan.thinking) extra.thinking = plan.thinking;
    if (plan.effort) extra.output_config = { effort: plan.effort };
    Object.assign(sampling, { temperature: undefined, top_p: undefined, top_k: undefined }, claudeSampling(req, plan.on, adjustments));
  } else {
    const ask = reasoningAsk(req);
    const what = askedAs(req);
    if (ask !== null && ask.kind !== 'off') {
      if (modelReasons(target) && isNova(target.upstreamModel)) {
        const effort = ask.kind === 'adaptive' ? NOVA_EFFORT[ask.effort ?? 'medium']
          : ask.derived ? NOVA_EFFORT[req.reasoning_effort as keyof typeof NOVA_EFFORT] : effortForBudget(ask.budget);
        extra.reasoningConfig = { type: 'enabled', maxReasoningEffort: effort };
        adjustments.push(`${what}->reasoningConfig(${effort})`);
      } else adjustments.push(`${what}=dropped(${modelReasons(target) ? 'model reasons on its own' : 'model does not reason'})`);
    } else if (ask !== null && req.thinking) adjustments.push('thinking=disabled->dropped');
  }
  if (sampling.temperature !== undefined) inference.temperature = sampling.temperature;
  if (sampling.top_p !== undefined) inference.topP = sampling.top_p;
  if (sampling.top_k !== undefined) extra.top_k = sampling.top_k;
}

const CLAUDE = signerOf('bedrock-converse', '')!;

/** Builds the Converse (or ConverseStream) request; the model id is URL-encoded into the path. */
export function encodeBedrockRequest(req: CanonicalRequest, target: TargetInfo): EncodedRequest {
  const edited = applyContextEdits(req);
  const adjustments = edited.adjustments;
  dropUnsupported(req, adjustments);
  const hoisted = hoistSystemTurns(ownThinking(edited.messages, CLAUDE, adjustments), adjustments, 'system');
  const turns = historyAsText(req, hoisted.messages, adjustments) ? toolHistoryAsText(hoisted.messages) : hoisted.messages;
  const body: Json = { messages: messages(turns) };
  const systemBlocks = [...req.system, ...hoisted.system];
  if (req.response_format?.type === 'json_object') {
    systemBlocks.push({ type: 'text', text: formatInstruction(req.response_format) });
    adjustments.push('response_format=json_object->system instruction');
  }
  if (systemBlocks.length > 0) {
    const system: Json[] = [];
    for (const s of systemBlocks) {
      system.push({ text: s.text });
      if (s.cache_control !== undefined) system.push(cachePoint(s.cache_control));
    }
    body.system = system;
  }
  const inference: Json = {};
  const extra: Json = {};
  if (req.max_tokens !== undefined) inference.maxTokens = req.max_tokens;
  reasoning(req, target, turns, inference, extra, adjustments);
  if (req.stop !== undefined && req.stop.length > 0) inference.stopSequences = req.stop;
  if (Object.keys(inference).length > 0) body.inferenceConfig = inference;
  // Ask for the matched sequence back (Anthropic models report it there; others ignore the path).
  if (inference.stopSequences !== undefined) body.additionalModelResponseFieldPaths = ['/stop_sequence'];
  const tools = toolConfig(req);
  if (tools !== undefined) body.toolConfig = tools;
  if (Object.keys(extra).length > 0) body.additionalModelRequestFields = extra;
  if (req.metadata !== undefined && Object.keys(req.metadata).length > 0) body.requestMetadata = req.metadata;
  const rf = req.response_format;
  if (rf?.type === 'json_schema') {
    const def: Json = { name: rf.name, schema: JSON.stringify(rf.schema), ...(rf.description !== undefined ? { description: rf.description } : {}) };
    body.outputConfig = { textFormat: { type: 'json_schema', structure: { jsonSchema: def } } };
  }
  const op = req.stream ? 'converse-stream' : 'converse';
  return { path: `/model/${encodeURIComponent(target.upstreamModel)}/${op}`, body, adjustments };
}
