// Tool names a target accepts. Clients name tools as their own APIs allow, and agents build long
// names (Claude Code's MCP tools are `mcp__<plugin or server>__<tool>`): Anthropic's Messages takes up
// to 128 characters ("tools.18.custom.name: String should have at most 128 characters", 2026), while
// OpenAI's Chat Completions ("Invalid 'tools[25].function.name': string too long. Expected a string
// with maximum length 64"), Bedrock's Converse and Gemini ("Invalid function name. Must start with a
// letter or an underscore. Must be alphameric (a-z, A-Z, 0-9), underscores (_), dots (.) or dashes
// (-), with a maximum length of 64.") take 64, and refuse the whole request for one name. When the
// router or a fallback sends such a conversation to one of them, a name the target would refuse is
// replaced on the way up (in the tool list, the tool choice and the earlier calls) by one made from it,
// and the target's calls of the replacement come back under the client's own name: the client never
// sees the replacement. The replacement keeps the name's start and end (the tool's own name is
// at the end of an MCP name; the model reads it) around a hash of the whole name, so it is the same on
// every turn and two long names never share one.
import type { Block, CanonicalRequest, CanonicalResponse, Message, StreamEvent, Tool } from './canonical.ts';
import type { WireFormat } from './codec.ts';
import { hashChars, isWordCode } from './tool-ids.ts';

/** `word`: letters, digits, '_' and '-'; `gemini`: those and '.' and ':', starting with a letter or '_'. */
export type ToolNameRule = { alphabet: 'word' | 'gemini'; max_length: number };

export const FORMAT_TOOL_NAMES: Readonly<Record<WireFormat, ToolNameRule>> = {
  'openai-chat': { alphabet: 'word', max_length: 64 },
  'anthropic-messages': { alphabet: 'word', max_length: 128 },
  'bedrock-converse': { alphabet: 'word', max_length: 64 },
  gemini: { alphabet: 'gemini', max_length: 64 },
};

const isFirst = (c: number): boolean => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;

function allowed(c: number, rule: ToolNameRule): boolean {
  return isWordCode(c) || (rule.alphabet === 'gemini' && (c === 46 || c === 58));
}

export function fitsName(name: string, rule: ToolNameRule): boolean {
  const n = name.length;
  if (n === 0 || n > rule.max_length) return false;
  if (rule.alphabet === 'gemini' && !isFirst(name.charCodeAt(0))) return false;
  for (let i = 0; i < n; i++) if (!allowed(name.charCodeAt(i), rule)) return false;
  return true;
}

const HASH = 8;
/** Characters of the name kept before the hash when the name is cut; the rest of the room goes to its end. */
const HEAD = 16;

/** The name sent upstream for a name `rule` refuses: its allowed characters, cut around a hash of the whole name. */
export function upstreamName(name: string, rule: ToolNameRule): string {
  let safe = '';
  for (let i = 0; i < name.length; i++) safe += allowed(name.charCodeAt(i), rule) ? name[i] : '_';
  if (rule.alphabet === 'gemini' && !isFirst(safe.charCodeAt(0))) safe = `_${safe}`;
  const hash = hashChars(name, HASH);
  if (safe.length + 1 + HASH <= rule.max_length) return `${safe}_${hash}`;
  const tail = rule.max_length - HEAD - 2 - HASH;
  return `${safe.slice(0, HEAD)}_${hash}_${safe.slice(safe.length - tail)}`;
}

/** Upstream name -> the client's name, for the names a request had replaced. */
export type ToolNameMap = Record<string, string>;

/**
 * A canonical request with the tool names `rule` refuses replaced (the same object when none is): the
 * tool list, a forced tool choice, the earlier calls and the tools a tool result references. `names` maps each replacement back.
 */
export function fitCanonicalToolNames(req: CanonicalRequest, rule: ToolNameRule): { req: CanonicalRequest; names: ToolNameMap | null; adjustment: string | null } {
  let names: ToolNameMap | null = null;
  const up = (name: string): string => {
    if (fitsName(name, rule)) return name;
    const to = upstreamName(name, rule);
    (names ??= {})[to] = name;
    return to;
  };
  let tools: Tool[] | undefined = req.tools;
  req.tools?.forEach((t, i) => {
    const to = up(t.name);
    if (to !== t.name) { if (tools === req.tools) tools = req.tools!.slice(); tools![i] = { ...t, name: to }; }
  });
  let choice = req.tool_choice;
  if (choice?.type === 'tool') { const to = up(choice.name); if (to !== choice.name) choice = { ...choice, name: to }; }
  let messages: Message[] | null = null;
  req.messages.forEach((m, i) => {
    let content: Message['content'] | null = null;
    m.content.forEach((b, j) => {
      if (b.type === 'tool_use') {
        const to = up(b.name);
        if (to !== b.name) { content ??= m.content.slice(); content[j] = { ...b, name: to }; }
      } else if (b.type === 'tool_result' && b.content.some((c) => c.type === 'tool_reference' && !fitsName(c.tool_name, rule))) {
        // A tool a client-side search loaded (src/formats/tool-search.ts) is named as it is declared.
        content ??= m.content.slice();
        content[j] = { ...b, content: b.content.map((c) => (c.type === 'tool_reference' ? { ...c, tool_name: up(c.tool_name) } : c)) };
      }
    });
    if (content) { messages ??= req.messages.slice(); messages[i] = { ...m, content }; }
  });
  if (names === null) return { req, names: null, adjustment: null };
  const out: CanonicalRequest = { ...req, messages: messages ?? req.messages };
  if (tools !== undefined) out.tools = tools;
  if (choice !== undefined) out.tool_choice = choice;
  return { req: out, names, adjustment: `tool_names=shortened(${Object.keys(names as ToolNameMap).length})` };
}

const restoreBlock = (b: Block, names: ToolNameMap): void => {
  if (b.type === 'tool_use' && Object.hasOwn(names, b.name)) b.name = names[b.name]!;
};

/** The target's calls in an answer, back under the client's names (in place). */
export function restoreResponseNames(res: CanonicalResponse, names: ToolNameMap | null): void {
  if (names === null) return;
  for (const b of res.content) restoreBlock(b, names);
}

/** The same for a stream: a call's name is in its block_start (in place). */
export function restoreEventNames(ev: StreamEvent, names: ToolNameMap | null): void {
  if (names !== null && ev.type === 'block_start') restoreBlock(ev.block, names);
}
