// Responses API items <-> canonical content. Input items (messages, function calls and their
// outputs, reasoning) become canonical turns; canonical answer blocks become output items. The ids
// of output items derive from the response id, so a stored response lists the same ids every time.
import type { Block, DocumentBlock, ImageBlock, Message, TextBlock, ThinkingBlock, RedactedThinkingBlock, ToolResultBlock } from '../canonical.ts';
import { GatewayError } from '../../gateway-error.ts';
import { isRecord } from '../errors.ts';
import { imageFromUrl, parseDataUrl } from '../openai-chat/decode-request.ts';
import { argumentsText, toolInput } from '../tool-arguments.ts';
import { canonicalToolName, type ToolOrigin } from './tools.ts';

type Rec = Record<string, unknown>;

const unsupported = (param: string, message: string): GatewayError => new GatewayError('unsupported_parameter', message, { param });

/**
 * Reasoning from a translated target travels to the client inside `encrypted_content`, so the
 * client's next turn gives back exactly the text and signature the target needs (Anthropic refuses
 * thinking that changed). The token is this prefix + base64url JSON: {t, s} or {r} (redacted).
 */
const REASONING_PREFIX = 'gwr1.';

export function packReasoning(b: ThinkingBlock | RedactedThinkingBlock): string {
  const payload = b.type === 'thinking' ? { t: b.thinking, s: b.signature } : { r: b.data };
  return REASONING_PREFIX + Buffer.from(JSON.stringify(payload)).toString('base64url');
}

function unpackReasoning(token: string): ThinkingBlock | RedactedThinkingBlock | null {
  if (!token.startsWith(REASONING_PREFIX)) return null;
  try {
    const p = JSON.parse(Buffer.from(token.slice(REASONING_PREFIX.length), 'base64url').toString('utf8')) as Rec;
    if (typeof p.r === 'string') return { type: 'redacted_thinking', data: p.r };
    if (typeof p.t === 'string') return { type: 'thinking', thinking: p.t, signature: typeof p.s === 'string' ? p.s : '' };
  } catch { /* not ours after all */ }
  return null;
}

/** True for the gateway's own reasoning token (a translated target's thinking), which no Responses server can read. */
export const isGatewayReasoning = (token: unknown): boolean => typeof token === 'string' && unpackReasoning(token) !== null;

/**
 * A compaction made by the gateway (POST /v1/responses/compact on a translated model) carries the
 * model's summary of the conversation in `encrypted_content`: this prefix + base64url JSON {s}. It is
 * opaque to clients as OpenAI's own compaction items are, and readable by the gateway on every target.
 */
const COMPACTION_PREFIX = 'gwc1.';

export function packCompaction(summary: string): string {
  return COMPACTION_PREFIX + Buffer.from(JSON.stringify({ s: summary })).toString('base64url');
}

/** The summary inside a gateway compaction token; null for anything else (an OpenAI compaction). */
export function unpackCompaction(token: string): string | null {
  if (!token.startsWith(COMPACTION_PREFIX)) return null;
  try {
    const p = JSON.parse(Buffer.from(token.slice(COMPACTION_PREFIX.length), 'base64url').toString('utf8')) as Rec;
    return typeof p.s === 'string' ? p.s : null;
  } catch { return null; }
}

/** How a compacted summary reads to a model that did not write it: context, not a new request. */
export const compactionText = (summary: string): string => `Summary of the earlier conversation (compacted):\n${summary}`;

/** Stable output item id: prefix, the response UUID's hex, the item's position. */
export function outputItemId(prefix: 'msg' | 'fc' | 'ctc' | 'rs', responseId: string, index: number): string {
  return `${prefix}_${responseId.replaceAll('-', '')}${index.toString(16).padStart(4, '0')}`;
}

function inputPart(p: Rec, at: string): TextBlock | ImageBlock | Block {
  switch (p.type) {
    case 'input_text': case 'output_text':
      return { type: 'text', text: String(p.text) };
    case 'refusal':
      return { type: 'text', text: String(p.refusal) };
    case 'input_image': {
      if (typeof p.image_url !== 'string') throw unsupported(`${at}.file_id`, 'images by file_id are not supported by this gateway; send image_url (a URL or a data: URL)');
      return imageFromUrl(p.image_url, p.detail);
    }
    case 'input_file': {
      if (typeof p.file_url === 'string') return { type: 'document', source: { type: 'url', url: p.file_url }, ...(typeof p.filename === 'string' ? { title: p.filename } : {}) };
      const d = typeof p.file_data === 'string' ? parseDataUrl(p.file_data) : null;
      if (!d) throw unsupported(`${at}.file_id`, 'only inline file_data (a base64 data: URL) or file_url is supported; file_id references are not');
      return { type: 'document', source: { type: 'base64', ...d }, ...(typeof p.filename === 'string' ? { title: p.filename } : {}) };
    }
    default:
      throw unsupported(`${at}.type`, `content part type '${String(p.type)}' is not supported by this gateway`);
  }
}

function parts(content: unknown, at: string): Block[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  return (content as Rec[]).map((p, j) => inputPart(p, `${at}[${j}]`));
}

function pushTurn(messages: Message[], role: Message['role'], content: Block[]): void {
  if (content.length === 0) return;
  const last = messages.at(-1);
  if (last && last.role === role) last.content.push(...content);
  else messages.push({ role, content });
}

/** A function_call_output's output: text, `input_image` and `input_file` parts (FunctionCallOutputItem's types). */
function toolOutput(output: unknown, at: string): Array<TextBlock | ImageBlock | DocumentBlock> {
  if (typeof output === 'string') return [{ type: 'text', text: output }];
  return parts(output, at).map((b) => {
    if (b.type === 'text' || b.type === 'image' || b.type === 'document') return b;
    throw unsupported(at, 'a tool output may hold text, images and files only');
  });
}

function reasoning(item: Rec): Block | null {
  const packed = typeof item.encrypted_content === 'string' ? unpackReasoning(item.encrypted_content) : null;
  if (packed) return packed;
  // Reasoning the gateway did not produce (another server's, or without its token): readable text,
  // unsigned, which targets that verify reasoning leave out.
  const texts = [...(Array.isArray(item.content) ? item.content : []), ...(Array.isArray(item.summary) ? item.summary : [])]
    .map((p: Rec) => String(p.text ?? '')).filter((t) => t !== '');
  return texts.length > 0 ? { type: 'thinking', thinking: texts.join('\n\n'), signature: '' } : null;
}

/** `input` (a string or items) -> system text (system and developer messages) and canonical turns. */
export function decodeInput(input: unknown): { system: TextBlock[]; messages: Message[] } {
  const system: TextBlock[] = [];
  const messages: Message[] = [];
  if (typeof input === 'string') return { system, messages: [{ role: 'user', content: [{ type: 'text', text: input }] }] };
  (input as Rec[]).forEach((item, i) => {
    const at = `input[${i}]`;
    const type = item.type ?? 'message';
    switch (type) {
      case 'message':
        if (item.role === 'system' || item.role === 'developer') {
          // Hoisted wherever they appear, as the chat-completions decoder does.
          system.push({ type: 'text', text: parts(item.content, `${at}.content`).map((b) => (b.type === 'text' ? b.text : '')).join('') });
        } else pushTurn(messages, item.role === 'assistant' ? 'assistant' : 'user', parts(item.content, `${at}.content`));
        return;
      case 'function_call':
        return pushTurn(messages, 'assistant', [{
          type: 'tool_use', id: String(item.call_id), name: canonicalToolName(String(item.name), item.namespace), ...toolInput(String(item.arguments ?? '')),
        }]);
      case 'custom_tool_call':
        return pushTurn(messages, 'assistant', [{
          type: 'tool_use', id: String(item.call_id), name: canonicalToolName(String(item.name), item.namespace), input: { input: String(item.input ?? '') },
        }]);
      case 'function_call_output': case 'custom_tool_call_output': {
        const result: ToolResultBlock = { type: 'tool_result', tool_use_id: String(item.call_id), content: toolOutput(item.output, `${at}.output`) };
        return pushTurn(messages, 'user', [result]);
      }
      case 'reasoning': {
        const b = reasoning(item);
        return b ? pushTurn(messages, 'assistant', [b]) : undefined;
      }
      case 'compaction': {
        const summary = unpackCompaction(String(item.encrypted_content));
        if (summary === null) {
          throw unsupported(`${at}.encrypted_content`, "this compaction item was made by an OpenAI Responses server and only such a server can read it; send the conversation again (or compact it on this model)");
        }
        return pushTurn(messages, 'user', [{ type: 'text', text: compactionText(summary) }]);
      }
      default:
        throw unsupported(`${at}.type`, `input item type '${String(type)}' is not supported when the target is not an OpenAI Responses server`);
    }
  });
  return { system, messages };
}

/** A canonical answer block -> its output item (completed). `origins` maps tool names back. */
export function outputItem(b: Block, id: string, origins: ReadonlyMap<string, ToolOrigin>): Rec | null {
  switch (b.type) {
    case 'text':
      return { id, type: 'message', status: 'completed', content: [{ type: 'output_text', annotations: [], logprobs: [], text: b.text }], role: 'assistant' };
    case 'tool_use': {
      const origin = origins.get(b.name) ?? { name: b.name };
      const ns = origin.namespace !== undefined ? { namespace: origin.namespace } : {};
      if (origin.custom) {
        const input = isRecord(b.input) && typeof b.input.input === 'string' ? b.input.input : JSON.stringify(b.input ?? {});
        return { id, type: 'custom_tool_call', status: 'completed', call_id: b.id, name: origin.name, input, ...ns };
      }
      return { id, type: 'function_call', status: 'completed', arguments: argumentsText(b), call_id: b.id, name: origin.name, ...ns };
    }
    case 'thinking':
      return { id, type: 'reasoning', summary: b.thinking === '' ? [] : [{ type: 'summary_text', text: b.thinking }], encrypted_content: packReasoning(b) };
    case 'redacted_thinking':
      return { id, type: 'reasoning', summary: [], encrypted_content: packReasoning(b) };
    default:
      return null;
  }
}

/** The id prefix of the item a block becomes. */
export function itemPrefix(b: Block, origins: ReadonlyMap<string, ToolOrigin>): 'msg' | 'fc' | 'ctc' | 'rs' {
  if (b.type === 'tool_use') return origins.get(b.name)?.custom ? 'ctc' : 'fc';
  return b.type === 'thinking' || b.type === 'redacted_thinking' ? 'rs' : 'msg';
}
