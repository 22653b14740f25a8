// Reads an Anthropic Messages request into what the mock needs: its input text (for token
// estimates), its cache_control breakpoints, the last user text and any trailing tool result.
import type { Breakpoint } from './cache.ts';
import { canonicalJson } from './text.ts';

type Json = Record<string, unknown>;
export const obj = (v: unknown): Json => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {});

export interface AnthropicPrompt {
  /** Every input text piece joined by newlines: tools, then system, then messages. */
  inputText: string;
  breakpoints: Breakpoint[];
  lastUser: string;
  /** Text of the tool_result when the last message carries one. */
  toolResult?: string;
}

/** Text a content block contributes to the prompt. */
function blockText(block: Json): string {
  switch (block.type) {
    case 'text':
      return String(block.text ?? '');
    case 'tool_use':
      return `${String(block.name ?? '')} ${canonicalJson(block.input ?? {})}`;
    case 'tool_result':
      return resultText(block.content);
    case 'thinking':
      return String(block.thinking ?? '');
    case 'tool_addition': {
      // A tool defined mid-conversation is read like a `tools` entry.
      const def = obj(obj(block.tool).definition);
      return def.name === undefined ? '' : `${String(def.name)} ${String(def.description ?? '')} ${canonicalJson(def.input_schema ?? {})}`;
    }
    default:
      return '';
  }
}

export function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((b) => String(obj(b).text ?? '')).join('');
  return '';
}

function blocksOf(content: unknown): Json[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return Array.isArray(content) ? content.map(obj) : [];
}

/** Walks tools, system and messages in prompt order, marking a breakpoint at each cache_control. */
export function readAnthropicPrompt(body: Json): AnthropicPrompt {
  const pieces: string[] = [];
  const breakpoints: Breakpoint[] = [];
  const add = (text: string, cacheControl: unknown): void => {
    pieces.push(text);
    const cc = obj(cacheControl);
    if (cc.type === 'ephemeral') breakpoints.push({ prefix: pieces.join('\n'), ttl: cc.ttl === '1h' ? '1h' : '5m' });
  };
  for (const t of Array.isArray(body.tools) ? body.tools.map(obj) : []) {
    add(`${String(t.name ?? '')} ${String(t.description ?? '')} ${canonicalJson(t.input_schema ?? {})}`, t.cache_control);
  }
  for (const b of blocksOf(body.system)) add(blockText(b), b.cache_control);
  const messages = Array.isArray(body.messages) ? body.messages.map(obj) : [];
  let lastUser = '';
  for (const m of messages) {
    const blocks = blocksOf(m.content);
    for (const b of blocks) add(blockText(b), b.cache_control);
    const text = blocks.filter((b) => b.type === 'text').map(blockText).join('');
    if (m.role === 'user' && text !== '') lastUser = text;
  }
  // A system message after the turn (Claude Code's "<total_tokens> left" note after a tool result) is an
  // instruction, not the turn the model answers.
  const last = messages.findLast((m) => m.role !== 'system');
  const result = last?.role === 'user' ? blocksOf(last.content).find((b) => b.type === 'tool_result') : undefined;
  return {
    inputText: pieces.join('\n'),
    breakpoints,
    lastUser,
    toolResult: result ? resultText(result.content) : undefined,
  };
}
