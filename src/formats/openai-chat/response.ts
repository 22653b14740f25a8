// Non-streaming chat.completion objects both ways, plus the usage and finish-reason mappings the
// stream encoder and decoder share.
import type { Block, CanonicalResponse, StopReason, Usage } from '../canonical.ts';
import { emptyUsage } from '../canonical.ts';
import { isRecord } from '../errors.ts';
import { callExtra } from './thought-signatures.ts';
import { argumentsText, receivedArguments, toolInput } from '../tool-arguments.ts';

type Rec = Record<string, unknown>;

export function finishReasonOf(stop: StopReason | null): string | null {
  switch (stop) {
    case null: return null;
    case 'max_tokens': return 'length';
    case 'tool_use': return 'tool_calls';
    case 'refusal': return 'content_filter';
    default: return 'stop'; // end_turn, stop_sequence, pause_turn
  }
}

export function stopReasonOf(finish: unknown): StopReason | null {
  switch (finish) {
    case 'length': return 'max_tokens';
    case 'tool_calls': case 'function_call': return 'tool_use';
    case 'content_filter': return 'refusal';
    case null: case undefined: return null;
    default: return 'end_turn';
  }
}

/** Canonical usage -> OpenAI usage: prompt tokens include cached reads and cache writes. */
export function openaiUsage(u: Partial<Usage>): Rec {
  const prompt = (u.input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0);
  const completion = u.output_tokens ?? 0;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: u.cache_read_input_tokens ?? 0 },
    completion_tokens_details: { reasoning_tokens: u.reasoning_tokens ?? 0 },
  };
}

/** OpenAI usage -> canonical: cached tokens are split out of prompt_tokens so input counts uncached only. */
export function canonicalUsage(raw: unknown, serviceTier?: unknown): Usage {
  const u = emptyUsage();
  if (!isRecord(raw)) return u;
  const num = (v: unknown): number => (typeof v === 'number' ? v : 0);
  const cached = isRecord(raw.prompt_tokens_details) ? num(raw.prompt_tokens_details.cached_tokens) : 0;
  u.cache_read_input_tokens = cached;
  u.input_tokens = Math.max(0, num(raw.prompt_tokens) - cached);
  u.output_tokens = num(raw.completion_tokens);
  u.reasoning_tokens = isRecord(raw.completion_tokens_details) ? num(raw.completion_tokens_details.reasoning_tokens) : 0;
  // Audio tokens are inside prompt/completion tokens; they bill at the audio prices when the catalog lists them.
  const audioIn = isRecord(raw.prompt_tokens_details) ? num(raw.prompt_tokens_details.audio_tokens) : 0;
  const audioOut = isRecord(raw.completion_tokens_details) ? num(raw.completion_tokens_details.audio_tokens) : 0;
  if (audioIn > 0) u.audio_input_tokens = audioIn;
  if (audioOut > 0) u.audio_output_tokens = audioOut;
  if (typeof serviceTier === 'string') u.service_tier = serviceTier;
  return u;
}

/**
 * Canonical response -> chat.completion. Thinking text is exposed as `message.reasoning_content`
 * (the field DeepSeek and several OpenAI-compatible servers use) so it is never silently lost;
 * redacted thinking is encrypted and has no readable form, so it is omitted.
 */
export function encodeChatResponse(res: CanonicalResponse, created = Math.floor(Date.now() / 1000)): Rec {
  const text = res.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
  const reasoning = res.content.flatMap((b) => (b.type === 'thinking' ? [b.thinking] : [])).join('');
  const calls: Rec[] = [];
  let signature = '';
  for (const b of res.content) {
    if (b.type === 'thinking') signature = b.signature;
    if (b.type !== 'tool_use') continue;
    calls.push({ id: b.id, type: 'function', function: { name: b.name, arguments: argumentsText(b) }, ...callExtra(signature) });
    signature = '';
  }
  const message: Rec = { role: 'assistant', content: text === '' && calls.length > 0 ? null : text, refusal: null };
  if (reasoning !== '') message.reasoning_content = reasoning;
  if (calls.length > 0) message.tool_calls = calls;
  const out: Rec = {
    id: res.id,
    object: 'chat.completion',
    created,
    model: res.model,
    choices: [{ index: 0, message, finish_reason: finishReasonOf(res.stop_reason), logprobs: null }],
    usage: openaiUsage(res.usage),
  };
  if (res.usage.service_tier !== undefined) out.service_tier = res.usage.service_tier;
  return out;
}


/** chat.completion -> canonical. `reasoning_content`/`reasoning` (compatible servers) become a thinking block. */
export function decodeChatResponse(body: unknown): CanonicalResponse {
  const b = isRecord(body) ? body : {};
  const choice = Array.isArray(b.choices) && isRecord(b.choices[0]) ? b.choices[0] : {};
  const msg = isRecord(choice.message) ? choice.message : {};
  const content: Block[] = [];
  const reasoning = msg.reasoning_content ?? msg.reasoning;
  if (typeof reasoning === 'string' && reasoning !== '') content.push({ type: 'thinking', thinking: reasoning, signature: '' });
  if (typeof msg.content === 'string' && msg.content !== '') content.push({ type: 'text', text: msg.content });
  if (typeof msg.refusal === 'string' && msg.refusal !== '') content.push({ type: 'text', text: msg.refusal });
  if (Array.isArray(msg.tool_calls)) {
    for (const c of msg.tool_calls) {
      if (!isRecord(c) || !isRecord(c.function)) continue;
      // Some compatible servers (llama.cpp, TGI) send the arguments as a JSON object, not its text.
      content.push({ type: 'tool_use', id: String(c.id), name: String(c.function.name), ...toolInput(receivedArguments(c.function.arguments)) });
    }
  }
  const refused = typeof msg.refusal === 'string' && msg.refusal !== '';
  return {
    id: typeof b.id === 'string' ? b.id : '',
    model: typeof b.model === 'string' ? b.model : '',
    content,
    stop_reason: refused ? 'refusal' : stopReasonOf(choice.finish_reason),
    stop_sequence: null,
    usage: canonicalUsage(b.usage, b.service_tier),
  };
}
