// Tool call arguments between the formats: OpenAI's (Chat Completions, Responses) carry them as text,
// which a model may leave unfinished or write as something other than an object; Anthropic's, Bedrock's
// and Gemini's need an object. Canonically a call holds an object (`input`) and, when the text was no
// object's JSON, that text too (`raw_arguments`): given back as written to OpenAI's formats, and as an
// empty input elsewhere, so a conversation holding such a call is neither refused by the gateway nor by
// the next provider, and the client gets a tool call it can send back.
import type { ToolUseBlock } from './canonical.ts';

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A call's arguments text as canonical input (empty text: no arguments). */
export function toolInput(args: string): { input: unknown; raw_arguments?: string } {
  if (args.trim() === '') return { input: {} };
  try {
    const v: unknown = JSON.parse(args);
    if (isObject(v)) return { input: v };
  } catch { /* kept as written, below */ }
  return { input: {}, raw_arguments: args };
}

/**
 * An OpenAI-format `function.arguments` as received, as text: the string itself, or the JSON of an object,
 * which some compatible servers send in its place (llama.cpp's server since 2026-03, TGI); '' for anything else.
 */
export const receivedArguments = (v: unknown): string => (typeof v === 'string' ? v : isObject(v) ? JSON.stringify(v) : '');

/** A call's arguments as OpenAI's formats carry them: the text as the model wrote it, else its input's JSON. */
export const argumentsText = (b: ToolUseBlock): string =>
  b.raw_arguments ?? (typeof b.input === 'string' ? b.input : JSON.stringify(b.input ?? {}));
