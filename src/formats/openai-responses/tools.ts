// Responses API tools <-> canonical tools. Function tools map one to one; a namespace's functions
// become canonical tools named `<namespace>__<name>` and a custom (free-form) tool becomes a function
// taking one string `input`, so any target can call them; the encoders turn calls back using the
// same table. Hosted tools (web_search, file_search, ...) run inside OpenAI and cannot be translated.
import type { Tool, ToolChoice } from '../canonical.ts';
import { GatewayError } from '../../gateway-error.ts';
import { isRecord } from '../errors.ts';

type Rec = Record<string, unknown>;

/** How a canonical tool name reads back in Responses terms. */
export type ToolOrigin = { name: string; namespace?: string; custom?: boolean };

export const NAMESPACE_SEPARATOR = '__';

const CUSTOM_SCHEMA = {
  type: 'object',
  properties: { input: { type: 'string', description: 'The raw input of the tool, as free text.' } },
  required: ['input'],
  additionalProperties: false,
} as const;

const unsupported = (param: string, message: string): GatewayError => new GatewayError('unsupported_parameter', message, { param });

function functionTool(t: Rec, name: string): Tool {
  const tool: Tool = { name, input_schema: isRecord(t.parameters) ? t.parameters : { type: 'object', properties: {} } };
  if (typeof t.description === 'string') tool.description = t.description;
  if (typeof t.strict === 'boolean') tool.strict = t.strict;
  return tool;
}

function customTool(t: Rec, name: string): Tool {
  const format = isRecord(t.format) && t.format.type === 'grammar' ? ` Input grammar (${String(t.format.syntax)}):\n${String(t.format.definition)}` : '';
  const description = `${typeof t.description === 'string' ? t.description : ''}${format}`.trim();
  return { name, input_schema: { ...CUSTOM_SCHEMA }, ...(description !== '' ? { description } : {}) };
}

export type DecodedTools = { tools: Tool[]; origins: Map<string, ToolOrigin>; dropped: string[] };

/**
 * The request's tools as canonical tools, with the table that maps names back. Hosted tools are
 * listed in `dropped` (the caller reports them) unless `tool_choice` forces one, which is refused.
 */
export function decodeTools(raw: unknown): DecodedTools {
  const out: DecodedTools = { tools: [], origins: new Map(), dropped: [] };
  if (!Array.isArray(raw)) return out;
  const add = (tool: Tool, origin: ToolOrigin, param: string): void => {
    if (out.origins.has(tool.name)) throw new GatewayError('invalid_parameter', `duplicate tool name '${tool.name}'`, { param });
    out.origins.set(tool.name, origin);
    out.tools.push(tool);
  };
  raw.forEach((t: Rec, i) => {
    const at = `tools[${i}]`;
    if (t.type === 'function') return add(functionTool(t, String(t.name)), { name: String(t.name) }, at);
    if (t.type === 'custom') return add(customTool(t, String(t.name)), { name: String(t.name), custom: true }, at);
    if (t.type === 'namespace') {
      const ns = String(t.name);
      (Array.isArray(t.tools) ? t.tools : []).forEach((f: Rec, j) => {
        const name = `${ns}${NAMESPACE_SEPARATOR}${String(f.name)}`;
        const origin: ToolOrigin = { name: String(f.name), namespace: ns, ...(f.type === 'custom' ? { custom: true } : {}) };
        add(f.type === 'custom' ? customTool(f, name) : functionTool(f, name), origin, `${at}.tools[${j}]`);
      });
      return;
    }
    out.dropped.push(String(t.type));
  });
  return out;
}

/** Canonical tool name of a call item or tool_choice naming `name` (in `namespace`). */
export function canonicalToolName(name: string, namespace: unknown): string {
  return typeof namespace === 'string' && namespace !== '' ? `${namespace}${NAMESPACE_SEPARATOR}${name}` : name;
}

/** `tool_choice` -> canonical; `parallel_tool_calls: false` rides on it as Anthropic does. */
export function decodeToolChoice(tc: unknown, parallel: unknown, hosted: readonly string[]): ToolChoice | undefined {
  let choice: ToolChoice | undefined;
  if (tc === 'none' || tc === 'auto') choice = { type: tc };
  else if (tc === 'required') choice = { type: 'any' };
  else if (isRecord(tc)) {
    if (tc.type === 'function' || tc.type === 'custom') choice = { type: 'tool', name: canonicalToolName(String(tc.name), tc.namespace) };
    else if (tc.type === 'allowed_tools') choice = { type: tc.mode === 'required' ? 'any' : 'auto' };
    else throw unsupported('tool_choice', `tool_choice '${String(tc.type)}' names a tool hosted by OpenAI${hosted.length ? ` (${hosted.join(', ')})` : ''}; this target cannot run it`);
  }
  if (parallel === false) choice = { ...(choice ?? { type: 'auto' }), disable_parallel_tool_use: true };
  return choice;
}

/** The table the encoders need, rebuilt from the client's request body (never fails: the body was decoded once already). */
export function toolOrigins(body: Rec): Map<string, ToolOrigin> {
  try { return decodeTools(body.tools).origins; } catch { return new Map(); }
}
