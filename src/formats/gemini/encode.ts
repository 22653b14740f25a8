// Canonical request -> Gemini generateContent body and path.
// Rules that are not a plain rename:
// - cache_control is dropped: Gemini caches repeated prefixes implicitly and reports the hit as
//   usageMetadata.cachedContentTokenCount, which decodes to cache_read_input_tokens.
// - A thinking block with text becomes a thought part; a thinking block with an empty text and a
//   signature carries the signature Gemini put on the *next* part (decode.ts emits it that way).
//   Signatures go back only to the model that signed them (src/formats/signatures.ts): thinking
//   signed elsewhere is dropped, and on Gemini 3 and later the first function call of a model turn
//   left without a signature gets Google's dummy; both reported.
// - redacted_thinking (Anthropic's opaque blob) means nothing to Gemini and is not sent.
// - parallel_tool_calls / disable_parallel_tool_use: Gemini has no switch; the field is ignored.
// - Mid-conversation system turns join systemInstruction; context edits are applied by the gateway.
// - container, logit_bias, verbosity, an end-user id, free-form metadata, a service tier and OpenAI's
//   prompt cache key and retention have no Gemini equivalent: dropped, each reported.
// - Reasoning asks follow geminiThinking below (model capabilities from the catalog).
import type { Block, CanonicalRequest, DocumentBlock, ImageSource } from '../canonical.ts';
import type { EncodedRequest, TargetInfo } from '../codec.ts';
import { GatewayError } from '../../gateway-error.ts';
import { applyContextEdits } from '../context-edits.ts';
import { hoistSystemTurns } from '../fallbacks.ts';
import { askedAs, fitBudget, reasoningAskFor, type Effort } from '../reasoning.ts';
import { ownThinking, signerOf } from '../signatures.ts';
import type { GeminiContent, GeminiGenerationConfig, GeminiPart, GeminiRequest, GeminiThinkingConfig } from './types.ts';
import { isRecord } from './types.ts';

/** Ids the decoder invents for function calls Gemini returned without one; never sent back. */
export const GENERATED_CALL_ID_PREFIX = 'gcall_';

/** reasoning_effort -> thinkingBudget, cut to the model's own range by geminiThinking. */
export const GEMINI_EFFORT_BUDGET: Readonly<Record<Effort, number>> = {
  minimal: 512, low: 1024, medium: 8192, high: 24576, xhigh: 32768, max: 32768,
};

/**
 * Thinking budget ranges of the Gemini thinking models (ai.google.dev, thinking): Pro models
 * think 128..32768 tokens and cannot turn thinking off (budget 0 is refused); Flash-Lite
 * 512..24576; Flash 0..24576. -1 asks for dynamic thinking on all of them.
 */
function budgetRange(model: string): { min: number; max: number; canDisable: boolean } {
  if (/-pro\b/.test(model)) return { min: 128, max: 32768, canDisable: false };
  if (/flash-lite/.test(model)) return { min: 512, max: 24576, canDisable: true };
  return { min: 1, max: 24576, canDisable: true };
}

const MIME_BY_EXTENSION: Record<string, string> = {
  png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', webp: 'image/webp', gif: 'image/gif',
  heic: 'image/heic', heif: 'image/heif', pdf: 'application/pdf', txt: 'text/plain',
};


function mediaPart(source: ImageSource | DocumentBlock['source']): GeminiPart {
  if (source.type === 'base64') return { inlineData: { mimeType: source.media_type, data: source.data } };
  if (source.type === 'text') return { text: source.data };
  const ext = /\.([a-z0-9]+)(?:[?#]|$)/i.exec(source.url)?.[1]?.toLowerCase();
  const mimeType = ext === undefined ? undefined : MIME_BY_EXTENSION[ext];
  return { fileData: mimeType === undefined ? { fileUri: source.url } : { mimeType, fileUri: source.url } };
}

const callId = (id: string): { id?: string } => (id.startsWith(GENERATED_CALL_ID_PREFIX) ? {} : { id });

/**
 * Google's documented value for a function call whose signature is missing (a history begun on
 * another model, or built by hand): Gemini 3 and later then skip validating it (ai.google.dev,
 * thought signatures).
 */
export const DUMMY_THOUGHT_SIGNATURE = 'skip_thought_signature_validator';

/** Gemini 3 and later refuse a current-turn function call without a signature; 1.x and 2.x do not. */
const needsCallSignature = (model: string): boolean => !/(^|\/)gemini-[12][.-]/.test(model);


/**
 * The first function call of a model turn carries the turn's signature; one without (none came
 * with it, or its signer was another model) gets Google's dummy on the models that require it.
 */
function signFirstCall(parts: GeminiPart[]): boolean {
  const first = parts.find((p) => p.functionCall !== undefined);
  if (first === undefined || first.thoughtSignature !== undefined) return false;
  first.thoughtSignature = DUMMY_THOUGHT_SIGNATURE;
  return true;
}

function encodeParts(blocks: Block[], toolNames: Map<string, string>): GeminiPart[] {
  const parts: GeminiPart[] = [];
  let pendingSignature: string | undefined;
  const push = (p: GeminiPart): void => {
    if (pendingSignature !== undefined) p.thoughtSignature = pendingSignature;
    pendingSignature = undefined;
    parts.push(p);
  };
  for (const b of blocks) {
    switch (b.type) {
      case 'text': push({ text: b.text }); break;
      case 'image': push(mediaPart(b.source)); break;
      case 'document':
        if (b.label !== undefined) push({ text: b.label });
        push(mediaPart(b.source));
        break;
      case 'tool_use':
        push({ functionCall: { ...callId(b.id), name: b.name, args: isRecord(b.input) ? b.input : { input: b.input } } });
        break;
      case 'tool_result': {
        const name = toolNames.get(b.tool_use_id);
        if (name === undefined) {
          throw new GatewayError('invalid_parameter',
            `tool result ${b.tool_use_id} answers no tool call earlier in the conversation`, { param: 'messages' });
        }
        // A text document a tool returned is part of its result; its images and files follow the response.
        const text = b.content.flatMap((c) => (c.type === 'text' ? [c.text]
          : c.type === 'document' && c.source.type === 'text' ? [...(c.label !== undefined ? [c.label] : []), c.source.data] : [])).join('\n');
        const response = b.is_error === true ? { error: text } : { result: text };
        push({ functionResponse: { ...callId(b.tool_use_id), name, response } });
        for (const c of b.content) {
          if (c.type === 'image') push(mediaPart(c.source));
          else if (c.type === 'document' && c.source.type !== 'text') {
            if (c.label !== undefined) push({ text: c.label });
            push(mediaPart(c.source));
          }
        }
        break;
      }
      // Signatures are this model's own, unwrapped (ownThinking left out the ones another model signed).
      case 'thinking':
        if (b.thinking !== '') {
          parts.push({ text: b.thinking, thought: true, ...(b.signature !== '' ? { thoughtSignature: b.signature } : {}) });
        } else if (b.signature !== '') {
          pendingSignature = b.signature;
        }
        break;
      case 'redacted_thinking': break;
    }
  }
  // A signature Gemini sent on a trailing empty text part goes back the same way.
  if (pendingSignature !== undefined) parts.push({ text: '', thoughtSignature: pendingSignature });
  return parts;
}

/** Stop sequences generationConfig takes ("up to 5"). */
const MAX_STOP = 5;

function generationConfig(req: CanonicalRequest): GeminiGenerationConfig {
  const gc: GeminiGenerationConfig = {};
  if (req.temperature !== undefined) gc.temperature = req.temperature;
  if (req.top_p !== undefined) gc.topP = req.top_p;
  if (req.top_k !== undefined) gc.topK = req.top_k;
  if (req.max_tokens !== undefined) gc.maxOutputTokens = req.max_tokens;
  if (req.stop !== undefined && req.stop.length > 0) gc.stopSequences = req.stop;
  if (req.frequency_penalty !== undefined) gc.frequencyPenalty = req.frequency_penalty;
  if (req.presence_penalty !== undefined) gc.presencePenalty = req.presence_penalty;
  if (req.seed !== undefined) gc.seed = req.seed;
  const rf = req.response_format;
  if (rf?.type === 'json_object') gc.responseMimeType = 'application/json';
  if (rf?.type === 'json_schema') {
    gc.responseMimeType = 'application/json';
    gc.responseJsonSchema = rf.schema;
  }
  return gc;
}

/**
 * The reasoning ask -> thinkingConfig, on thinking models only (the catalog's `reasoning`): a
 * budget or effort becomes thinkingBudget inside the model's range and below maxOutputTokens
 * (thinking counts toward it), adaptive thinking is the dynamic budget -1, `display: omitted`
 * leaves thought summaries out. Disabled thinking is budget 0 where the model allows it.
 */
function geminiThinking(req: CanonicalRequest, target: TargetInfo, adjustments: string[]): GeminiThinkingConfig | undefined {
  const ask = reasoningAskFor(req, target, adjustments);
  if (ask === null) return undefined;
  const what = askedAs(req);
  const range = budgetRange(target.upstreamModel);
  if (ask.kind === 'off') {
    if (range.canDisable) return { thinkingBudget: 0 };
    adjustments.push(`${what}=dropped(model cannot turn thinking off)`);
    return undefined;
  }
  const includeThoughts = ask.display !== 'omitted';
  let budget = ask.kind === 'adaptive' ? (ask.effort ? GEMINI_EFFORT_BUDGET[ask.effort] : -1) : ask.budget;
  if (ask.kind === 'budget' && ask.derived) budget = GEMINI_EFFORT_BUDGET[req.reasoning_effort as Effort];
  if (budget === -1) {
    adjustments.push('thinking=adaptive->thinkingBudget(-1)');
    return { thinkingBudget: -1, includeThoughts };
  }
  const wanted = budget;
  budget = Math.min(Math.max(budget, range.min), range.max);
  const fitted = req.max_tokens === undefined ? budget : fitBudget(budget, req.max_tokens, range.min);
  if (fitted === null) {
    adjustments.push(`${what}=dropped(max_tokens ${req.max_tokens} leaves no room for thinking)`);
    return undefined;
  }
  if (fitted !== wanted || ask.kind !== 'budget' || ask.derived) adjustments.push(`${what}->thinkingBudget(${fitted})`);
  return { thinkingBudget: fitted, includeThoughts };
}

/** Parameters with no Gemini equivalent: hints and Anthropic-only features, left out and reported. */
function dropUnsupported(req: CanonicalRequest, adjustments: string[]): void {
  if (req.container !== undefined) adjustments.push('container=dropped(Anthropic code execution)');
  if (req.logit_bias !== undefined && Object.keys(req.logit_bias).length > 0) adjustments.push('logit_bias=dropped');
  if (req.verbosity !== undefined) adjustments.push('verbosity=dropped');
  for (const k of ['user', 'service_tier', 'prompt_cache_key', 'prompt_cache_retention'] as const) {
    if (req[k] !== undefined) adjustments.push(`${k}=dropped`);
  }
  if (req.metadata !== undefined && Object.keys(req.metadata).length > 0) adjustments.push('metadata=dropped');
}

/** Builds the generateContent (or streamGenerateContent?alt=sse) request for a Gemini target. */
export function encodeGeminiRequest(req: CanonicalRequest, target: TargetInfo): EncodedRequest {
  if (req.stop !== undefined && req.stop.length > MAX_STOP) {
    // Only a Messages client (stop_sequences, no limit) sends more; leaving some out would let the answer run past them.
    throw new GatewayError('unsupported_parameter', `'stop_sequences': ${req.stop.length} were given; ${target.provider} (Gemini) takes at most ${MAX_STOP}`, { param: 'stop_sequences' });
  }
  const edited = applyContextEdits(req);
  const adjustments = edited.adjustments;
  dropUnsupported(req, adjustments);
  const hoisted = hoistSystemTurns(ownThinking(edited.messages, signerOf('gemini', target.upstreamModel)!, adjustments), adjustments, 'systemInstruction');
  const toolNames = new Map<string, string>();
  for (const m of hoisted.messages) for (const b of m.content) if (b.type === 'tool_use') toolNames.set(b.id, b.name);

  const contents: GeminiContent[] = [];
  const needsDummies = needsCallSignature(target.upstreamModel);
  let dummies = 0;
  for (const m of hoisted.messages) {
    const parts = encodeParts(m.content, toolNames);
    if (m.role === 'assistant' && needsDummies && signFirstCall(parts)) dummies++;
    if (parts.length > 0) contents.push({ role: m.role === 'assistant' ? 'model' : 'user', parts });
  }
  if (dummies > 0) adjustments.push(`thoughtSignature=${DUMMY_THOUGHT_SIGNATURE}(${dummies} function call turn${dummies === 1 ? '' : 's'} without a signature of this model)`);
  const body: GeminiRequest = { contents };
  const system = [...req.system, ...hoisted.system];
  if (system.length > 0) body.systemInstruction = { parts: system.map((s) => ({ text: s.text })) };
  const gc = generationConfig(req);
  const thinking = geminiThinking(req, target, adjustments);
  if (thinking) gc.thinkingConfig = thinking;
  if (Object.keys(gc).length > 0) body.generationConfig = gc;
  if (req.tools !== undefined && req.tools.length > 0) {
    body.tools = [{
      functionDeclarations: req.tools.map((t) => ({
        name: t.name, ...(t.description !== undefined ? { description: t.description } : {}), parametersJsonSchema: t.input_schema,
      })),
    }];
    const tc = req.tool_choice;
    if (tc !== undefined) {
      body.toolConfig = {
        functionCallingConfig: tc.type === 'tool' ? { mode: 'ANY', allowedFunctionNames: [tc.name] }
          : { mode: tc.type === 'any' ? 'ANY' : tc.type === 'none' ? 'NONE' : 'AUTO' },
      };
    }
  }
  const method = req.stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
  return { path: `/models/${encodeURIComponent(target.upstreamModel)}:${method}`, body, adjustments };
}
