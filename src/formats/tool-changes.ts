// Mid-conversation tool changes (Anthropic's `mid-conversation-tool-changes` beta, which Claude Code
// sends): a system turn's `tool_addition` offers a tool from that point on and a `tool_removal`
// withdraws one, while `tools` stays as it was so the prompt cache holds (Claude Code adds MCP tools
// that arrive late this way). Only Anthropic's Messages reads them. For every other target the gateway
// declares what is offered at the end of the conversation, the tools the answering model may call:
// those declared, plus the additions (a `tool_definition` declares its tool, a `tool_reference` to a
// `defer_loading` tool loads it), minus the removals. Earlier calls of a tool since removed stay in the
// history; the blocks are not sent, and a system turn left without text goes. A change naming an MCP
// tool or toolset refers to Anthropic's server-side MCP connector, which no other target has: refused.
import type { Block, CanonicalRequest, Message, ReasoningEffort, Tool, ToolChangeBlock } from './canonical.ts';
import type { WireFormat } from './codec.ts';
import { GatewayError } from '../gateway-error.ts';

/**
 * The wire formats that read Anthropic's tool extensions themselves: tool changes here and client-side
 * tool search (src/formats/tool-search.ts); every other target gets them lowered.
 */
export const READS_TOOL_EXTENSIONS: ReadonlySet<WireFormat> = new Set(['anthropic-messages']);

/** Whether a target of `format` reads tool changes, MCP references included (the router's candidates, src/router/candidates.ts). */
export const readsToolChanges = (format: WireFormat): boolean => READS_TOOL_EXTENSIONS.has(format);

const isChange = (b: Block): b is ToolChangeBlock => b.type === 'tool_addition' || b.type === 'tool_removal';
const changes = (m: Message): boolean => m.role === 'system' && m.content.some(isChange);

/**
 * The tools offered at the end of the conversation: declared, added and not removed since, in the
 * order they were first offered (`req.tools` itself when the conversation changes none). A tool a
 * reference adds is offered loaded (without `defer_loading`); one defined again replaces its definition.
 */
export function offeredTools(req: CanonicalRequest): Tool[] | undefined {
  if (!req.messages.some(changes)) return req.tools;
  const known = new Map<string, Tool>();
  const offered = new Map<string, Tool>();
  for (const t of req.tools ?? []) { known.set(t.name, t); offered.set(t.name, t); }
  for (const m of req.messages) {
    if (m.role !== 'system') continue;
    for (const b of m.content) {
      if (!isChange(b)) continue;
      const { tool } = b;
      if (tool.type === 'tool_definition') {
        known.set(tool.definition.name, tool.definition);
        offered.set(tool.definition.name, tool.definition);
      } else if (tool.type === 'tool_reference') {
        const t = known.get(tool.name);
        if (b.type === 'tool_removal') offered.delete(tool.name);
        else if (t !== undefined) offered.set(tool.name, loaded(t));
      }
    }
  }
  return [...offered.values()];
}

function loaded(t: Tool): Tool {
  if (t.defer_loading !== true) return t;
  const { defer_loading: _, ...declared } = t;
  return declared;
}

/** System turns with what only Anthropic reads: tool changes or an effort; or no content at all (nothing for a target to read). */
const lowered = (m: Message): boolean => m.role === 'system' && (m.effort !== undefined || m.content.length === 0 || m.content.some(isChange));

/**
 * A tool choice that forces a tool must find one offered at the end of the conversation: a target
 * that reads no tool changes would otherwise refuse it in its own words (or, forced to "any" with
 * nothing declared, answer as if no tool were asked for). 400 naming the field.
 */
function forcedChoiceOffered(req: CanonicalRequest, offered: ReadonlySet<string>): void {
  const tc = req.tool_choice;
  if (tc?.type === 'tool' && !offered.has(tc.name)) {
    throw new GatewayError('invalid_parameter', `'tool_choice.name': "${tc.name}" is not offered at the end of the conversation (a tool_removal withdrew it, or no tool_addition offered it)`, { param: 'tool_choice.name' });
  }
  if (tc?.type === 'any' && offered.size === 0) {
    throw new GatewayError('invalid_parameter', "'tool_choice': a tool must be called, but the conversation's tool changes left none offered", { param: 'tool_choice' });
  }
}

/**
 * The request as a target without tool changes must see it (the same object when it has none):
 * the tools offered at the end declared, the changes left out of their system turns (a turn left
 * without text dropped), and the effort a system turn sets for the turn being answered made the
 * request's. Throws GatewayError (400) for a change naming an MCP tool or toolset, and for a tool
 * choice forcing a tool none of the tools offered at the end is.
 */
export function lowerToolChanges(req: CanonicalRequest, format: WireFormat): { req: CanonicalRequest; adjustments: string[] } {
  if (READS_TOOL_EXTENSIONS.has(format) || !req.messages.some(lowered)) return { req, adjustments: [] };
  if (req.mcp_tool_change !== undefined) {
    const param = `${req.mcp_tool_change}.type`;
    throw new GatewayError('unsupported_parameter', `'${param}': a tool change naming an MCP tool or toolset refers to Anthropic's MCP connector, which a ${format} target does not have`, { param });
  }
  const tools = offeredTools(req) ?? [];
  const declared = new Set((req.tools ?? []).map((t) => t.name));
  const names = new Set(tools.map((t) => t.name));
  forcedChoiceOffered(req, names);
  const added = tools.filter((t) => !declared.has(t.name)).length;
  const removed = [...declared].filter((n) => !names.has(n)).length;
  let effort: ReasoningEffort | undefined;
  const answering = req.messages.findLastIndex((m) => m.role === 'assistant');
  const messages = req.messages.flatMap((m, i): Message[] => {
    if (!lowered(m)) return [m];
    if (i > answering && m.effort !== undefined) effort = m.effort;
    const content = m.content.filter((b) => !isChange(b));
    return content.length === 0 ? [] : [{ role: 'system', content }];
  });
  const out: CanonicalRequest = { ...req, messages };
  if (tools.length > 0 || req.tools !== undefined) out.tools = tools;
  if (effort !== undefined) out.reasoning_effort = effort;
  const adjustments = req.messages.some(changes) ? [`tool_changes=applied(added ${added}, removed ${removed})`] : [];
  if (effort !== undefined) adjustments.push(`reasoning_effort=${effort}(system turn)`);
  return { req: out, adjustments };
}
