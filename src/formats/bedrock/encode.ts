// Canonical request -> Bedrock Converse / ConverseStream body and path.
// Rules that are not a plain rename:
// - cache_control on a system block, content block or tool puts a `cachePoint {type: default}`
//   right after it: the same "cache everything up to here" meaning as an Anthropic breakpoint.
//   A `ttl` of 1h is sent as the cachePoint's `ttl` (CachePointBlock accepts 5m | 1h).
// - Consecutive messages of one role are merged: Converse insists on strict alternation.
// - tool_choice none: tools are left out when the conversation holds no tool blocks; with tool
//   blocks Converse requires toolConfig and has no "none" choice, so that is a 400.
// - response_format json_schema -> outputConfig.textFormat {type: json_schema, structure.jsonSchema
//   {name, schema as a JSON string}}; json_object (no schema) has no Converse equivalent: 400.
// - thinking and top_k go in additionalModelRequestFields in the Anthropic-on-Bedrock shape;
//   reasoning_effort becomes a thinking budget. metadata becomes requestMetadata (invocation logs).
// - Images by URL, frequency/presence penalties, seed, logit_bias, verbosity, container and
//   context_management have no Converse equivalent: 400.
import type { Block, CanonicalRequest, DocumentBlock, ImageBlock, Message } from '../canonical.ts';
import type { EncodedRequest } from '../codec.ts';
import { GatewayError } from '../../http/errors.ts';

type Json = Record<string, unknown>;

/** reasoning_effort -> budget_tokens (Anthropic's minimum budget is 1024). */
export const BEDROCK_EFFORT_BUDGET = { minimal: 1024, low: 2048, medium: 8192, high: 24576 } as const;

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
      case 'document': out.push(document(b, ++counter.docs)); break;
      case 'tool_use': out.push({ toolUse: { toolUseId: b.id, name: b.name, input: b.input ?? {} } }); break;
      case 'tool_result':
        out.push({
          toolResult: {
            toolUseId: b.tool_use_id,
            content: b.content.map((c) => (c.type === 'text' ? { text: c.text } : image(c))),
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

function rejectUnsupported(req: CanonicalRequest): void {
  if (req.container !== undefined) throw unsupported('container', 'containers are an Anthropic API feature');
  if (req.context_management !== undefined) throw unsupported('context_management', 'context management is an Anthropic API feature');
  if (req.logit_bias !== undefined && Object.keys(req.logit_bias).length > 0) throw unsupported('logit_bias', 'no token bias');
  if (req.frequency_penalty !== undefined) throw unsupported('frequency_penalty', 'no frequency penalty');
  if (req.presence_penalty !== undefined) throw unsupported('presence_penalty', 'no presence penalty');
  if (req.seed !== undefined) throw unsupported('seed', 'no sampling seed');
  if (req.verbosity !== undefined) throw unsupported('verbosity', 'no verbosity control');
  if (req.response_format?.type === 'json_object') throw unsupported('response_format', 'json_object has no Converse equivalent; send a json_schema');
}

function toolConfig(req: CanonicalRequest): Json | undefined {
  const tools = req.tools ?? [];
  if (tools.length === 0) return undefined;
  if (req.tool_choice?.type === 'none') {
    const hasToolBlocks = req.messages.some((m) => m.content.some((b) => b.type === 'tool_use' || b.type === 'tool_result'));
    if (hasToolBlocks) throw unsupported('tool_choice', '"none" cannot be honoured once the conversation holds tool calls');
    return undefined;
  }
  const specs: Json[] = [];
  for (const t of tools) {
    specs.push({ toolSpec: { name: t.name, ...(t.description !== undefined ? { description: t.description } : {}), inputSchema: { json: t.input_schema } } });
    if (t.cache_control !== undefined) specs.push(cachePoint(t.cache_control));
  }
  const tc = req.tool_choice;
  const choice = tc === undefined ? undefined : tc.type === 'tool' ? { tool: { name: tc.name } } : tc.type === 'any' ? { any: {} } : { auto: {} };
  return choice === undefined ? { tools: specs } : { tools: specs, toolChoice: choice };
}

/** Builds the Converse (or ConverseStream) request; the model id is URL-encoded into the path. */
export function encodeBedrockRequest(req: CanonicalRequest, modelId: string): EncodedRequest {
  rejectUnsupported(req);
  const body: Json = { messages: messages(req.messages) };
  if (req.system.length > 0) {
    const system: Json[] = [];
    for (const s of req.system) {
      system.push({ text: s.text });
      if (s.cache_control !== undefined) system.push(cachePoint(s.cache_control));
    }
    body.system = system;
  }
  const inference: Json = {};
  if (req.max_tokens !== undefined) inference.maxTokens = req.max_tokens;
  if (req.temperature !== undefined) inference.temperature = req.temperature;
  if (req.top_p !== undefined) inference.topP = req.top_p;
  if (req.stop !== undefined && req.stop.length > 0) inference.stopSequences = req.stop;
  if (Object.keys(inference).length > 0) body.inferenceConfig = inference;
  // Ask for the matched sequence back (Anthropic models report it there; others ignore the path).
  if (inference.stopSequences !== undefined) body.additionalModelResponseFieldPaths = ['/stop_sequence'];
  const tools = toolConfig(req);
  if (tools !== undefined) body.toolConfig = tools;
  const extra: Json = {};
  if (req.thinking !== undefined) extra.thinking = req.thinking;
  else if (req.reasoning_effort !== undefined) extra.thinking = { type: 'enabled', budget_tokens: BEDROCK_EFFORT_BUDGET[req.reasoning_effort] };
  if (req.top_k !== undefined) extra.top_k = req.top_k;
  if (Object.keys(extra).length > 0) body.additionalModelRequestFields = extra;
  if (req.metadata !== undefined && Object.keys(req.metadata).length > 0) body.requestMetadata = req.metadata;
  const rf = req.response_format;
  if (rf?.type === 'json_schema') {
    const def: Json = { name: rf.name, schema: JSON.stringify(rf.schema), ...(rf.description !== undefined ? { description: rf.description } : {}) };
    body.outputConfig = { textFormat: { type: 'json_schema', structure: { jsonSchema: def } } };
  }
  const op = req.stream ? 'converse-stream' : 'converse';
  return { path: `/model/${encodeURIComponent(modelId)}/${op}`, body };
}
