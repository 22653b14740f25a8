// Upstream side of the chat-completions codec: CanonicalRequest -> OpenAI request body.
// Lossy on purpose in a few documented places, each reported; what cannot be carried is refused with a 400.
import { createHash } from 'node:crypto';
import type { Block, CanonicalRequest, Message, ReasoningEffort, ToolChoice, ToolResultBlock } from '../canonical.ts';
import type { EncodedRequest, TargetInfo } from '../codec.ts';
import { GatewayError } from '../../gateway-error.ts';
import { applyContextEdits } from '../context-edits.ts';
import { effortForBudget, reasoningAskFor } from '../reasoning.ts';
import { argumentsText } from '../tool-arguments.ts';
import { MAX_STOP } from './validate.ts';

type Rec = Record<string, unknown>;
export { effortForBudget };

const unsupported = (param: string, message: string): GatewayError =>
  new GatewayError('unsupported_parameter', message, { param });

function dataUrl(media: string, data: string): string {
  return `data:${media};base64,${data}`;
}

/** One user-side content block -> chat content part. Cache markers are dropped: OpenAI caches prefixes automatically. */
function userPart(b: Block, param: string): Rec {
  switch (b.type) {
    case 'text':
      return { type: 'text', text: b.text };
    case 'image':
      return {
        type: 'image_url',
        image_url: { url: b.source.type === 'url' ? b.source.url : dataUrl(b.source.media_type, b.source.data), ...(b.detail ? { detail: b.detail } : {}) },
      };
    case 'document':
      if (b.source.type === 'text') return { type: 'text', text: b.source.data };
      if (b.source.type === 'base64') {
        return { type: 'file', file: { filename: b.title ?? 'document', file_data: dataUrl(b.source.media_type, b.source.data) } };
      }
      throw unsupported(param, `${param}: documents by URL cannot be sent to an OpenAI chat-completions target (send the file's bytes as base64)`);
    default:
      throw unsupported(param, `a '${b.type}' block cannot appear in a user turn for an OpenAI chat-completions target`);
  }
}

const labelled = (label: string | undefined, text: string): string => (label === undefined ? text : `${label}\n${text}`);

/** A user-side block as chat content parts: a document's label (its title and context) before it. */
function userParts(b: Block, param: string): Rec[] {
  const part = userPart(b, param);
  return b.type === 'document' && b.label !== undefined ? [{ type: 'text', text: b.label }, part] : [part];
}

/** A tool result's text: its text blocks as one (as Anthropic joins them), a text document on lines of its own. */
function toolResultText(content: ToolResultBlock['content']): string {
  let out = '';
  let doc = false;
  for (const c of content) {
    const isDoc = c.type === 'document' && c.source.type === 'text';
    const t = c.type === 'text' ? c.text : c.type === 'document' && c.source.type === 'text' ? labelled(c.label, c.source.data) : null;
    if (t === null) continue;
    out += out !== '' && (isDoc || doc) ? `\n${t}` : t;
    doc = isDoc;
  }
  return out;
}

/**
 * A user turn becomes tool messages (one per tool_result, first) followed by at most one user
 * message. Tool messages have no error flag, so a failed tool's text says so: `Error: <text>`.
 * Tool messages hold text only (ChatCompletionToolMessageParam): a text document a tool returned is
 * part of that text, and its images and inline files follow in the user message (files reported).
 */
function encodeUserTurn(m: Message, i: number, out: Rec[], adjustments: string[]): void {
  const parts: Rec[] = [];
  const trailingImages: Rec[] = [];
  m.content.forEach((b, j) => {
    const at = `messages[${i}].content[${j}]`;
    if (b.type !== 'tool_result') return void parts.push(...userParts(b, at));
    const text = toolResultText(b.content);
    b.content.forEach((c, k) => {
      if (c.type === 'image') trailingImages.push(userPart(c, at));
      else if (c.type === 'document' && c.source.type !== 'text') {
        trailingImages.push(...userParts(c, `${at}.content[${k}]`));
        adjustments.push(`${at}.content[${k}]=document->user message(tool messages take text only)`);
      }
    });
    if (b.is_error === true) adjustments.push(`${at}.is_error->content('Error: ...')`);
    out.push({ role: 'tool', tool_call_id: b.tool_use_id, content: b.is_error === true ? `Error: ${text}` : text });
  });
  const all = [...trailingImages, ...parts];
  if (all.length === 0) return;
  const only = all[0]!;
  out.push({ role: 'user', content: all.length === 1 && only.type === 'text' ? only.text : all });
}

/** Thinking blocks are dropped: chat completions accepts no reasoning input from earlier turns. */
function encodeAssistantTurn(m: Message): Rec {
  const text = m.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
  const calls = m.content.flatMap((b) => (b.type === 'tool_use'
    ? [{ id: b.id, type: 'function', function: { name: b.name, arguments: argumentsText(b) } }]
    : []));
  const msg: Rec = { role: 'assistant', content: text === '' && calls.length > 0 ? null : text };
  if (calls.length > 0) msg.tool_calls = calls;
  return msg;
}

function encodeToolChoice(tc: ToolChoice): unknown {
  if (tc.type === 'tool') return { type: 'function', function: { name: tc.name } };
  return tc.type === 'any' ? 'required' : tc.type;
}

/** OpenAI takes at most 128 characters; a longer end-user id (Claude Code sends a JSON object) goes as its SHA-256. */
function safetyIdentifier(user: string, adjustments: string[]): string {
  if (user.length <= 128) return user;
  adjustments.push('safety_identifier=sha256(longer than 128 characters)');
  return createHash('sha256').update(user).digest('hex');
}

/**
 * The reasoning ask -> `reasoning_effort`, on reasoning models only: a thinking budget becomes the
 * nearest level, adaptive thinking its effort (or the model's default), an effort passes as it
 * is. Disabled thinking cannot be honoured (reasoning models always reason) and is dropped.
 */
function reasoningEffort(req: CanonicalRequest, target: TargetInfo, adjustments: string[]): ReasoningEffort | undefined {
  const ask = reasoningAskFor(req, target, adjustments);
  if (ask === null) return undefined;
  if (ask.kind === 'off') {
    if (req.thinking) adjustments.push('thinking=disabled->dropped(model always reasons)');
    return req.thinking ? undefined : 'none';
  }
  if (ask.kind === 'adaptive') {
    adjustments.push(`thinking=adaptive->reasoning_effort(${ask.effort ?? 'model default'})`);
    return ask.effort;
  }
  if (ask.derived) return req.reasoning_effort;
  const effort = effortForBudget(ask.budget);
  adjustments.push(`thinking.budget_tokens=${ask.budget}->reasoning_effort(${effort})`);
  return effort;
}

/**
 * Dropped, each reported, because OpenAI has no equivalent and they are hints rather than
 * semantics: top_k, thinking on non-reasoning targets, earlier thinking blocks, a container.
 * cache_control is left out without a report: OpenAI caches prefixes automatically. Context
 * edits are applied by the gateway. Refused: documents by URL.
 */
export function encodeChatRequest(req: CanonicalRequest, target: TargetInfo): EncodedRequest {
  const edited = applyContextEdits(req);
  const adjustments = edited.adjustments;
  if (req.container !== undefined) adjustments.push('container=dropped(Anthropic code execution)');
  if (req.top_k !== undefined) adjustments.push('top_k=dropped');
  const messages: Rec[] = [];
  if (req.system.length > 0) messages.push({ role: 'system', content: req.system.map((b) => b.text).join('\n\n') });
  edited.messages.forEach((m, i) => {
    if (m.role === 'user') encodeUserTurn(m, i, messages, adjustments);
    else if (m.role === 'system') messages.push({ role: 'system', content: m.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n\n') });
    else messages.push(encodeAssistantTurn(m));
  });
  const body: Rec = { model: target.upstreamModel, messages };
  if (req.max_tokens !== undefined) body.max_completion_tokens = req.max_tokens;
  for (const k of ['temperature', 'top_p', 'frequency_penalty', 'presence_penalty', 'seed', 'logit_bias', 'verbosity', 'metadata', 'service_tier', 'prompt_cache_key', 'prompt_cache_retention'] as const) {
    if (req[k] !== undefined) body[k] = req[k];
  }
  if (req.stop && req.stop.length > MAX_STOP) {
    // Only a Messages client (stop_sequences, no limit) sends more; leaving some out would let the answer run past them.
    throw unsupported('stop_sequences', `'stop_sequences': ${req.stop.length} were given; ${target.provider} (OpenAI chat completions) takes at most ${MAX_STOP}`);
  }
  if (req.stop && req.stop.length > 0) body.stop = req.stop;
  if (req.user !== undefined) body.safety_identifier = safetyIdentifier(req.user, adjustments);
  const effort = reasoningEffort(req, target, adjustments);
  if (effort) body.reasoning_effort = effort;
  if (req.tools && req.tools.length > 0) {
    body.tools = req.tools.map((t) => {
      const fn: Rec = { name: t.name, parameters: t.input_schema };
      if (t.description !== undefined) fn.description = t.description;
      if (t.strict !== undefined) fn.strict = t.strict;
      return { type: 'function', function: fn };
    });
    if (req.tool_choice) body.tool_choice = encodeToolChoice(req.tool_choice);
    // OpenAI rejects parallel_tool_calls when no tools are sent, so it only rides along with tools.
    const parallel = req.tool_choice?.disable_parallel_tool_use === true ? false : req.parallel_tool_calls;
    if (parallel !== undefined) body.parallel_tool_calls = parallel;
  }
  const rf = req.response_format;
  if (rf?.type === 'json_schema') {
    const js: Rec = { name: rf.name, schema: rf.schema };
    if (rf.strict !== undefined) js.strict = rf.strict;
    if (rf.description !== undefined) js.description = rf.description;
    body.response_format = { type: 'json_schema', json_schema: js };
  } else if (rf) {
    body.response_format = { type: rf.type };
  }
  if (req.stream) {
    body.stream = true;
    // Always asked for: the gateway meters every stream; the engine hides the chunk from clients that did not ask.
    body.stream_options = { include_usage: true };
  }
  return { path: '/chat/completions', body, adjustments };
}
