// What the Gemini generateContent API refuses, checked by the mock before it answers: unknown
// fields (protobuf JSON mapping), roles, thinking configs the model cannot take (no thinking on
// 2.0 and older, budget 0 on Pro models, budgets out of range), output limits, unanswered
// function calls and thought signatures (another model's, or none on a Gemini 3 function call).
// Messages follow the API's wording (INVALID_ARGUMENT).

import { signatureIssuer } from './text.ts';

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {});
const list = (v: unknown): Json[] => (Array.isArray(v) ? v.map(obj) : []);

const REQUEST_FIELDS = new Set(['contents', 'systemInstruction', 'system_instruction', 'tools', 'toolConfig', 'tool_config',
  'safetySettings', 'safety_settings', 'generationConfig', 'generation_config', 'cachedContent', 'cached_content', 'labels']);
const GENERATION_FIELDS = new Set(['temperature', 'topP', 'topK', 'candidateCount', 'maxOutputTokens', 'stopSequences',
  'responseMimeType', 'responseSchema', 'responseJsonSchema', 'presencePenalty', 'frequencyPenalty', 'seed', 'responseLogprobs',
  'logprobs', 'thinkingConfig', 'responseModalities', 'mediaResolution', 'speechConfig', 'enableEnhancedCivicAnswers']);
const THINKING_FIELDS = new Set(['thinkingBudget', 'includeThoughts', 'thinkingLevel']);

/** Thinking and output limits per model family (ai.google.dev model pages); unknown names think like 2.5 Flash. */
export function geminiModel(name: string): { thinks: boolean; min: number; max: number; canDisable: boolean; maxOutput: number } {
  if (/gemini-(1\.|2\.0)/.test(name)) return { thinks: false, min: 0, max: 0, canDisable: true, maxOutput: 8192 };
  if (/-pro\b/.test(name)) return { thinks: true, min: 128, max: 32768, canDisable: false, maxOutput: 65536 };
  if (/flash-lite/.test(name)) return { thinks: true, min: 512, max: 24576, canDisable: true, maxOutput: 65536 };
  return { thinks: true, min: 1, max: 24576, canDisable: true, maxOutput: 65536 };
}

/** Gemini 3 and later sign function calls and refuse a current-turn call without its signature. */
export const signsCalls = (model: string): boolean => !/gemini-[12][.-]/.test(model);

/** Google's documented values for a history a Gemini model did not write (ai.google.dev, thought signatures). */
const DUMMY_SIGNATURES = new Set(['skip_thought_signature_validator', 'context_engineering_is_the_way_to_go']);

/**
 * Thought signatures: each must be one this model issued (or a documented dummy), and on Gemini 3 and
 * later the first function call of every model turn since the last user text must carry one.
 */
function signatureProblem(contents: Json[], model: string): string | null {
  for (const c of contents) {
    for (const p of list(c.parts)) {
      const sig = p.thoughtSignature;
      if (sig === undefined || DUMMY_SIGNATURES.has(String(sig))) continue;
      if (typeof sig !== 'string' || signatureIssuer(sig) !== `gemini:${model}`) return 'Corrupted thought signature.';
    }
  }
  if (!signsCalls(model)) return null;
  let start = 0;
  contents.forEach((c, i) => { if (c.role !== 'model' && list(c.parts).some((p) => typeof p.text === 'string')) start = i + 1; });
  for (const [i, c] of contents.entries()) {
    if (i < start || c.role !== 'model') continue;
    const first = list(c.parts).findIndex((p) => p.functionCall !== undefined);
    if (first >= 0 && list(c.parts)[first]!.thoughtSignature === undefined) {
      return `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${String(obj(list(c.parts)[first]!.functionCall).name)}\` , position ${first + 1}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.`;
    }
  }
  return null;
}

const unknown = (name: string, at?: string): string => `Invalid JSON payload received. Unknown name "${name}"${at ? ` at '${at}'` : ''}: Cannot find field.`;

/** The 400 INVALID_ARGUMENT message for a request the real API refuses, or null. */
export function geminiRequestProblem(b: Json, model: string): string | null {
  // functionCall / functionResponse parts need no declared tools: Gemini CLI's history compression
  // sends them with a system instruction only (google-gemini/gemini-cli chatCompressionService.ts).
  for (const k of Object.keys(b)) if (!REQUEST_FIELDS.has(k)) return unknown(k);
  const gc = obj(b.generationConfig);
  for (const k of Object.keys(gc)) if (!GENERATION_FIELDS.has(k)) return unknown(k, 'generation_config');
  // Function names: a letter or '_' first, then letters, digits, '_', '.', ':' or '-', at most 64.
  for (const [i, t] of list(b.tools).entries()) {
    for (const [j, d] of list(t.functionDeclarations).entries()) {
      if (!/^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$/.test(String(d.name))) {
        return `* GenerateContentRequest.tools[${i}].function_declarations[${j}].name: Invalid function name. Must start with a letter or an underscore. Must be alphameric (a-z, A-Z, 0-9), underscores (_), dots (.), colons (:), or dashes (-), with a maximum length of 64.`;
      }
    }
  }
  const contents = list(b.contents);
  for (const [i, c] of contents.entries()) {
    if (c.role !== undefined && c.role !== 'user' && c.role !== 'model') return 'Please use a valid role: user, model.';
    if (list(c.parts).length === 0) return `* GenerateContentRequest.contents[${i}].parts: contents.parts must not be empty.`;
  }
  // Every function call turn is answered by the next turn, one response per call.
  for (const [i, c] of contents.entries()) {
    const calls = list(c.parts).filter((p) => p.functionCall !== undefined).length;
    if (c.role !== 'model' || calls === 0 || i === contents.length - 1) continue;
    const responses = list(contents[i + 1]!.parts).filter((p) => p.functionResponse !== undefined).length;
    if (responses !== calls) return 'Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.';
  }
  const signatures = signatureProblem(contents, model);
  if (signatures !== null) return signatures;
  const spec = geminiModel(model);
  if (typeof gc.maxOutputTokens === 'number' && gc.maxOutputTokens > spec.maxOutput) {
    return `Unable to submit request because it has a maxOutputTokens value of ${gc.maxOutputTokens} but the supported range is from 1 (inclusive) to ${spec.maxOutput + 1} (exclusive). Update the value and try again.`;
  }
  if (gc.thinkingConfig !== undefined) {
    const tc = obj(gc.thinkingConfig);
    for (const k of Object.keys(tc)) if (!THINKING_FIELDS.has(k)) return unknown(k, 'generation_config.thinking_config');
    if (!spec.thinks) return 'Thinking is not supported by this model.';
    const budget = tc.thinkingBudget;
    if (typeof budget === 'number' && budget !== -1) {
      if (budget === 0 && !spec.canDisable) return 'Budget 0 is invalid. This model only works in thinking mode.';
      if (budget !== 0 && (budget < spec.min || budget > spec.max)) return `The thinking budget ${budget} is invalid. Please choose a value between ${spec.min} and ${spec.max}.`;
    }
  }
  return null;
}
