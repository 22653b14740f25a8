// Client-side tool search, as Anthropic's Messages defines it: a client declares many tools with
// `defer_loading: true` (kept out of the model's context) beside a search tool of its own, whose
// results carry `tool_reference` blocks naming the tools to load. Claude Code does this when its MCP
// servers bring more tools than it wants in every prompt (its ToolSearch tool). Only Anthropic's API
// reads these; OpenAI's Chat Completions, Bedrock's Converse and Gemini have no such thing (and
// OpenAI takes at most 128 tools). When a conversation goes to one of them (chosen, routed, or a
// fallback), the gateway does what Anthropic's API does with it: a deferred tool is declared only once
// the conversation loaded it (a tool_reference names it, an earlier call used it, or the tool choice
// forces it), and each tool_reference becomes a line of text in its tool result.
import type { Block, CanonicalRequest, Message, Tool, ToolResultBlock } from './canonical.ts';
import type { WireFormat } from './codec.ts';
import { offeredTools, READS_TOOL_EXTENSIONS } from './tool-changes.ts';

/** A tool_reference as the other targets read it. */
export const referenceText = (toolName: string): string => `Tool ${toolName} loaded: it can be called now.`;

/** The names the conversation loaded: referenced by a tool result, called earlier, or forced by the tool choice. */
function loadedNames(req: CanonicalRequest): { loaded: Set<string>; referenced: boolean } {
  const loaded = new Set<string>();
  let referenced = false;
  for (const m of req.messages) {
    for (const b of m.content) {
      if (b.type === 'tool_use') loaded.add(b.name);
      else if (b.type === 'tool_result') for (const c of b.content) if (c.type === 'tool_reference') { loaded.add(c.tool_name); referenced = true; }
    }
  }
  if (req.tool_choice?.type === 'tool') loaded.add(req.tool_choice.name);
  return { loaded, referenced };
}

/**
 * The tools in the model's context, on any target: those offered at the end of the conversation
 * (src/formats/tool-changes.ts), deferred ones only once loaded (what token counts and cost estimates
 * must read; the same array when nothing is deferred or changed). `offered`: offeredTools(req), when
 * the caller has it already.
 */
export function toolsInContext(req: CanonicalRequest, offered: Tool[] | undefined = offeredTools(req)): Tool[] {
  const tools = offered ?? [];
  if (!tools.some((t) => t.defer_loading === true)) return tools;
  const { loaded } = loadedNames(req);
  return tools.filter((t) => t.defer_loading !== true || loaded.has(t.name));
}

/**
 * The request as a target without tool search must see it (the same object when nothing is deferred
 * or referenced): deferred tools the conversation has not loaded left out, references made text.
 */
export function lowerToolSearch(req: CanonicalRequest, format: WireFormat): { req: CanonicalRequest; adjustment: string | null } {
  if (READS_TOOL_EXTENSIONS.has(format)) return { req, adjustment: null };
  const deferred = req.tools?.some((t) => t.defer_loading === true) ?? false;
  if (!deferred && !req.messages.some(hasReference)) return { req, adjustment: null };
  const { loaded, referenced } = loadedNames(req);
  let withheld = 0;
  const tools = req.tools?.flatMap((t): Tool[] => {
    if (t.defer_loading !== true) return [t];
    if (!loaded.has(t.name)) { withheld++; return []; }
    const { defer_loading: _, ...declared } = t;
    return [declared];
  });
  const messages = referenced ? req.messages.map(referencesAsText) : req.messages;
  const out: CanonicalRequest = { ...req, messages };
  if (tools !== undefined) out.tools = tools;
  return { req: out, adjustment: `tool_search=emulated(withheld ${withheld})` };
}

const references = (b: Block): b is ToolResultBlock => b.type === 'tool_result' && b.content.some((c) => c.type === 'tool_reference');
const hasReference = (m: Message): boolean => m.content.some(references);

/** A turn with its tool results' references made text (the same object when it has none). */
function referencesAsText(m: Message): Message {
  if (!hasReference(m)) return m;
  return {
    ...m,
    content: m.content.map((b) => (!references(b) ? b : {
      ...b,
      content: b.content.map((c): ToolResultBlock['content'][number] => (c.type === 'tool_reference' ? { type: 'text', text: referenceText(c.tool_name) } : c)),
    })),
  };
}
