// The compact endpoint's shapes: its request as the openai package types it (ResponseCompactParams),
// the summary request the gateway sends a translated model (a transcript of the conversation, so tool
// calls, reasoning and images of any format need no tool definitions or signatures), and the API's
// compacted output: every user message, then one compaction item.
import { GatewayError } from '../gateway-error.ts';
import { isRecord } from '../formats/errors.ts';
import { packCompaction, unpackCompaction } from '../formats/openai-responses/items.ts';
import { validateInputItem } from '../formats/openai-responses/validate.ts';

type Rec = Record<string, unknown>;

const bad = (param: string, message: string): GatewayError => new GatewayError('invalid_parameter', message, { param });
const missing = (param: string): GatewayError => new GatewayError('missing_parameter', `Missing required parameter: '${param}'.`, { param });

function optString(v: unknown, param: string): void {
  if (v !== undefined && v !== null && typeof v !== 'string') throw bad(param, `'${param}' must be a string`);
}
function optOneOf(v: unknown, param: string, allowed: readonly string[]): void {
  if (v !== undefined && v !== null && (typeof v !== 'string' || !allowed.includes(v))) throw bad(param, `'${param}' must be one of ${allowed.join(', ')}`);
}

/**
 * Throws GatewayError (400 naming the field) for what the API would refuse. Unknown top-level fields
 * are ignored as on POST /v1/responses (SDKs add new ones); `input` may be left out only when
 * previous_response_id names the conversation.
 */
export function validateCompactRequest(body: unknown): Rec {
  if (!isRecord(body)) throw new GatewayError('invalid_body', 'the request body must be a JSON object');
  const b: Rec = body;
  if (b.model === undefined || b.model === null) throw missing('model');
  if (typeof b.model !== 'string' || b.model === '') throw bad('model', "'model' must be a non-empty string");
  if (b.model === 'router') {
    throw new GatewayError('unsupported_parameter', 'model "router" is not served on /v1/responses/compact: compact with the model the conversation ran on (the x-router-model of its last answer)', { param: 'model' });
  }
  if (b.input !== undefined && b.input !== null) {
    if (typeof b.input !== 'string') {
      if (!Array.isArray(b.input)) throw bad('input', "'input' must be a string or an array of input items");
      b.input.forEach(validateInputItem);
    }
  } else if (typeof b.previous_response_id !== 'string') throw missing('input');
  optString(b.instructions, 'instructions');
  optString(b.previous_response_id, 'previous_response_id');
  optString(b.prompt_cache_key, 'prompt_cache_key');
  optOneOf(b.prompt_cache_retention, 'prompt_cache_retention', ['in_memory', '24h']);
  optOneOf(b.service_tier, 'service_tier', ['auto', 'default', 'fast', 'flex', 'priority']);
  for (const k of ['prompt_cache_options', 'image'] as const) {
    if (b[k] !== undefined && b[k] !== null && !isRecord(b[k])) throw bad(k, `'${k}' must be an object`);
  }
  if (isRecord(b.image)) optOneOf(b.image.context_compression, 'image.context_compression', ['auto', 'enabled', 'disabled']);
  if (isRecord(b.prompt_cache_options)) optOneOf(b.prompt_cache_options.mode, 'prompt_cache_options.mode', ['implicit', 'explicit']);
  return b;
}

const items = (input: unknown): Rec[] =>
  (typeof input === 'string' ? [{ type: 'message', role: 'user', content: input }] : Array.isArray(input) ? input as Rec[] : []);

function partsText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return (content as Rec[]).map((p) => {
    if (typeof p.text === 'string') return p.text;
    if (typeof p.refusal === 'string') return `[refused: ${p.refusal}]`;
    if (p.type === 'input_image') return '[image]';
    if (p.type === 'input_file') return `[file${typeof p.filename === 'string' ? `: ${p.filename}` : ''}]`;
    return '';
  }).join('');
}

/** The conversation as plain text, one entry per item, oldest first. */
export function transcript(input: unknown): string {
  const lines: string[] = [];
  items(input).forEach((it, i) => {
    const type = it.type ?? 'message';
    switch (type) {
      case 'message': lines.push(`[${String(it.role)}]\n${partsText(it.content)}`); return;
      case 'function_call': lines.push(`[assistant called tool ${String(it.name)} (call ${String(it.call_id)})]\n${String(it.arguments)}`); return;
      case 'custom_tool_call': lines.push(`[assistant called tool ${String(it.name)} (call ${String(it.call_id)})]\n${String(it.input)}`); return;
      case 'function_call_output': case 'custom_tool_call_output': lines.push(`[tool result (call ${String(it.call_id)})]\n${partsText(it.output)}`); return;
      case 'reasoning': return; // the model's own scratch work: the summary keeps what it led to
      case 'compaction': {
        const s = unpackCompaction(String(it.encrypted_content));
        if (s === null) {
          throw new GatewayError('unsupported_parameter', 'this compaction item was made by an OpenAI Responses server and only such a server can read it; compact on that model or send the conversation again', { param: `input[${i}].encrypted_content` });
        }
        lines.push(`[earlier summary]\n${s}`);
        return;
      }
      default: lines.push(`[${String(type)} item]`);
    }
  });
  return lines.join('\n\n');
}

export const SUMMARY_INSTRUCTIONS = [
  'You compact a conversation between a user and an AI assistant so that the assistant can continue it from your summary alone.',
  'Write a dense summary: the user\'s goals and constraints, decisions taken, facts learned (names, numbers, file paths, identifiers),',
  'tool calls made and what they returned, work completed, open questions and the next steps. Do not address the user; do not add anything new.',
].join(' ');

/** The non-streamed Responses request asking `model` for the summary. */
export function summaryRequest(body: Rec, model: string): Rec {
  const ran = typeof body.instructions === 'string' && body.instructions !== '' ? `\n\nThe assistant ran under these instructions:\n${body.instructions}` : '';
  return {
    model, store: false, stream: false, instructions: SUMMARY_INSTRUCTIONS + ran,
    input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: `<conversation>\n${transcript(body.input)}\n</conversation>\n\nWrite the summary of this conversation now.` }] }],
  };
}

/** The API's compacted list: the user messages of the conversation (with ids), then one compaction item. */
export function compactedOutput(input: unknown, summary: string, id: string): Rec[] {
  const hex = id.replaceAll('-', '');
  const out: Rec[] = [];
  items(input).forEach((it, i) => {
    if ((it.type ?? 'message') !== 'message' || it.role !== 'user') return;
    const content = typeof it.content === 'string' ? [{ type: 'input_text', text: it.content }] : it.content;
    out.push({ id: typeof it.id === 'string' ? it.id : `msg_${hex}u${i.toString(16).padStart(4, '0')}`, type: 'message', status: 'completed', role: 'user', content });
  });
  out.push({ id: `cmp_${hex}`, type: 'compaction', encrypted_content: packCompaction(summary) });
  return out;
}

