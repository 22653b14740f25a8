// Canonical request -> Gemini generateContent body and path.
// Rules that are not a plain rename:
// - cache_control is dropped: Gemini caches repeated prefixes implicitly and reports the hit as
//   usageMetadata.cachedContentTokenCount, which decodes to cache_read_input_tokens.
// - A thinking block with text becomes a thought part; a thinking block with an empty text and a
//   signature carries the signature Gemini put on the *next* part (decode.ts emits it that way).
// - redacted_thinking (Anthropic's opaque blob) means nothing to Gemini and is not sent.
// - parallel_tool_calls / disable_parallel_tool_use: Gemini has no switch; the field is ignored.
// - container, context_management, logit_bias and verbosity have no Gemini equivalent: 400.
import type { Block, CanonicalRequest, DocumentBlock, ImageSource } from '../canonical.ts';
import type { EncodedRequest } from '../codec.ts';
import { GatewayError } from '../../http/errors.ts';
import type { GeminiContent, GeminiGenerationConfig, GeminiPart, GeminiRequest } from './types.ts';
import { isRecord } from './types.ts';

/** Ids the decoder invents for function calls Gemini returned without one; never sent back. */
export const GENERATED_CALL_ID_PREFIX = 'gcall_';

/** reasoning_effort -> thinkingBudget; every value is inside the range all 2.5+ models accept. */
export const GEMINI_EFFORT_BUDGET = { minimal: 512, low: 1024, medium: 8192, high: 24576 } as const;

const MIME_BY_EXTENSION: Record<string, string> = {
  png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', webp: 'image/webp', gif: 'image/gif',
  heic: 'image/heic', heif: 'image/heif', pdf: 'application/pdf', txt: 'text/plain',
};

const unsupported = (param: string, why: string): GatewayError =>
  new GatewayError('unsupported_parameter', `${param} is not supported by Gemini models: ${why}`, { param });

function mediaPart(source: ImageSource | DocumentBlock['source']): GeminiPart {
  if (source.type === 'base64') return { inlineData: { mimeType: source.media_type, data: source.data } };
  if (source.type === 'text') return { text: source.data };
  const ext = /\.([a-z0-9]+)(?:[?#]|$)/i.exec(source.url)?.[1]?.toLowerCase();
  const mimeType = ext === undefined ? undefined : MIME_BY_EXTENSION[ext];
  return { fileData: mimeType === undefined ? { fileUri: source.url } : { mimeType, fileUri: source.url } };
}

const callId = (id: string): { id?: string } => (id.startsWith(GENERATED_CALL_ID_PREFIX) ? {} : { id });

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
      case 'document': push(mediaPart(b.source)); break;
      case 'tool_use':
        push({ functionCall: { ...callId(b.id), name: b.name, args: isRecord(b.input) ? b.input : { input: b.input } } });
        break;
      case 'tool_result': {
        const name = toolNames.get(b.tool_use_id);
        if (name === undefined) {
          throw new GatewayError('invalid_parameter',
            `tool result ${b.tool_use_id} answers no tool call earlier in the conversation`, { param: 'messages' });
        }
        const text = b.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
        const response = b.is_error === true ? { error: text } : { result: text };
        push({ functionResponse: { ...callId(b.tool_use_id), name, response } });
        for (const c of b.content) if (c.type === 'image') push(mediaPart(c.source));
        break;
      }
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

function generationConfig(req: CanonicalRequest): GeminiGenerationConfig | undefined {
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
  if (req.thinking?.type === 'enabled') {
    gc.thinkingConfig = { thinkingBudget: req.thinking.budget_tokens, includeThoughts: true };
  } else if (req.thinking?.type === 'disabled') {
    gc.thinkingConfig = { thinkingBudget: 0 };
  } else if (req.reasoning_effort !== undefined) {
    gc.thinkingConfig = { thinkingBudget: GEMINI_EFFORT_BUDGET[req.reasoning_effort] };
  }
  return Object.keys(gc).length > 0 ? gc : undefined;
}

function rejectUnsupported(req: CanonicalRequest): void {
  if (req.container !== undefined) throw unsupported('container', 'containers are an Anthropic feature');
  if (req.context_management !== undefined) throw unsupported('context_management', 'context management is an Anthropic feature');
  if (req.logit_bias !== undefined && Object.keys(req.logit_bias).length > 0) throw unsupported('logit_bias', 'Gemini has no token bias');
  if (req.verbosity !== undefined) throw unsupported('verbosity', 'Gemini has no verbosity control');
}

/** Builds the generateContent (or streamGenerateContent?alt=sse) request for a Gemini target. */
export function encodeGeminiRequest(req: CanonicalRequest, model: string): EncodedRequest {
  rejectUnsupported(req);
  const toolNames = new Map<string, string>();
  for (const m of req.messages) for (const b of m.content) if (b.type === 'tool_use') toolNames.set(b.id, b.name);

  const contents: GeminiContent[] = [];
  for (const m of req.messages) {
    const parts = encodeParts(m.content, toolNames);
    if (parts.length > 0) contents.push({ role: m.role === 'assistant' ? 'model' : 'user', parts });
  }
  const body: GeminiRequest = { contents };
  if (req.system.length > 0) body.systemInstruction = { parts: req.system.map((s) => ({ text: s.text })) };
  const gc = generationConfig(req);
  if (gc) body.generationConfig = gc;
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
  return { path: `/models/${encodeURIComponent(model)}:${method}`, body };
}
