// How many tools a target takes. OpenAI's Chat Completions refuses a request declaring more than 128
// ("Invalid 'tools': array too long. Expected an array with maximum length 128, but got an array with
// length 129 instead.", code array_above_max_length), and the OpenAI-compatible APIs copy its limits;
// Claude Code with a few MCP servers passes 128 easily. Anthropic's Messages, Bedrock's Converse and the
// Gemini API document no such limit here (Gemini answers requests of 70+ declarations; an older Vertex
// SDK reference says 64, which its API does not enforce). The router treats "more than 128 tools" as
// a capability only the unlimited formats have; a named model gets its provider's own 400.
import type { WireFormat } from './codec.ts';

export const FORMAT_MAX_TOOLS: Readonly<Record<WireFormat, number | null>> = {
  'openai-chat': 128,
  'anthropic-messages': null,
  'bedrock-converse': null,
  gemini: null,
};

/** Past this many tools in the model's context, only the formats without a limit take the request. */
export const MANY_TOOLS = 128;

/** Whether a target of `format` takes more than MANY_TOOLS tools. */
export const takesManyTools = (format: WireFormat): boolean => {
  const max = FORMAT_MAX_TOOLS[format];
  return max === null || max > MANY_TOOLS;
};
