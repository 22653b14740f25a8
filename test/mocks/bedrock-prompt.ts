// Reads a Bedrock Converse request into what the mock needs: input text, cachePoint breakpoints,
// tool specs and choice, the last user text and any trailing toolResult.
import type { Breakpoint } from './cache.ts';
import type { PlanInput, ToolDef } from './plan.ts';
import { canonicalJson } from './text.ts';

type Json = Record<string, unknown>;
export const obj = (v: unknown): Json => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {});
export const list = (v: unknown): Json[] => (Array.isArray(v) ? v.map(obj) : []);

export interface BedrockPrompt {
  /** Every input text piece joined by newlines: tools, then system, then messages. */
  inputText: string;
  breakpoints: Breakpoint[];
  tools: ToolDef[];
  choice: PlanInput['choice'];
  lastUser: string;
  toolResult?: string;
}

function toolResultText(block: Json): string {
  return list(block.content).map((c) => (typeof c.text === 'string' ? c.text : c.json !== undefined ? canonicalJson(c.json) : '')).join('');
}

/** Text a content block contributes; undefined for a cachePoint (a marker, not content). */
function blockText(b: Json): string | undefined {
  if (b.cachePoint) return undefined;
  if (typeof b.text === 'string') return b.text;
  if (b.toolUse) return `${String(obj(b.toolUse).name ?? '')} ${canonicalJson(obj(b.toolUse).input ?? {})}`;
  if (b.toolResult) return toolResultText(obj(b.toolResult));
  if (b.reasoningContent) return String(obj(obj(b.reasoningContent).reasoningText).text ?? '');
  return '';
}

export function readBedrockPrompt(body: Json): BedrockPrompt {
  const pieces: string[] = [];
  const breakpoints: Breakpoint[] = [];
  const visit = (b: Json, text: string | undefined): void => {
    if (text !== undefined) pieces.push(text);
    else if (b.cachePoint) breakpoints.push({ prefix: pieces.join('\n'), ttl: obj(b.cachePoint).ttl === '1h' ? '1h' : '5m' });
  };
  const tc = obj(body.toolConfig);
  const tools: ToolDef[] = [];
  for (const t of list(tc.tools)) {
    const spec = obj(t.toolSpec);
    if (t.toolSpec) {
      tools.push({ name: String(spec.name), schema: obj(spec.inputSchema).json });
      visit(t, `${String(spec.name ?? '')} ${String(spec.description ?? '')} ${canonicalJson(obj(spec.inputSchema).json ?? {})}`);
    } else visit(t, undefined);
  }
  for (const s of list(body.system)) visit(s, blockText(s));
  let lastUser = '';
  const messages = list(body.messages);
  for (const m of messages) {
    const blocks = list(m.content);
    for (const b of blocks) visit(b, blockText(b));
    const text = blocks.filter((b) => typeof b.text === 'string').map((b) => String(b.text)).join('');
    if (m.role === 'user' && text !== '') lastUser = text;
  }
  const choice = obj(tc.toolChoice);
  const forced = obj(choice.tool).name;
  const result = list(messages.at(-1)?.content).find((b) => b.toolResult);
  return {
    inputText: pieces.join('\n'),
    breakpoints,
    tools,
    choice: typeof forced === 'string' ? { name: forced } : choice.any ? 'any' : 'auto',
    lastUser,
    toolResult: result ? toolResultText(obj(result.toolResult)) : undefined,
  };
}
