// Tool calls and tool results of a conversation told as plain text, for a target that refuses tool
// blocks in a request declaring no tools (Bedrock's Converse: "The toolConfig field must be defined
// when using toolUse and toolResult content blocks"). A final "summarise what you did" turn sent
// without tools, or an agent whose tools were all removed mid-conversation, then still reaches the
// model with its history, instead of a declared tool nobody offered (which the model could call).
// A call becomes the assistant's text `Called tool <name> (call <id>) with input <JSON>.`; its result
// the user's text `Result of <name> (call <id>):` and the result's text (`Error from ...` when the
// tool failed), its images and documents kept as blocks after it. Turns keep their roles and their order.
import type { Block, DocumentBlock, ImageBlock, Message, TextBlock } from './canonical.ts';
import { referenceText } from './tool-search.ts';
import { argumentsText } from './tool-arguments.ts';

/** Whether any turn holds a tool call or a tool result. */
export const holdsToolBlocks = (messages: readonly Message[]): boolean =>
  messages.some((m) => m.content.some((b) => b.type === 'tool_use' || b.type === 'tool_result'));

/** The conversation with its tool calls and results made text (the same array when it holds none). */
export function toolHistoryAsText(messages: Message[]): Message[] {
  if (!holdsToolBlocks(messages)) return messages;
  const names = new Map<string, string>();
  for (const m of messages) for (const b of m.content) if (b.type === 'tool_use') names.set(b.id, b.name);
  return messages.map((m) => ({ ...m, content: m.content.flatMap((b) => asText(b, names)) }));
}

function asText(b: Block, names: ReadonlyMap<string, string>): Block[] {
  if (b.type === 'tool_use') {
    return [withCache({ type: 'text', text: `Called tool ${b.name} (call ${b.id}) with input ${argumentsText(b)}.` }, b.cache_control)];
  }
  if (b.type !== 'tool_result') return [b];
  const tool = names.get(b.tool_use_id) ?? 'a tool';
  const texts: string[] = [];
  const images: Array<ImageBlock | DocumentBlock> = [];
  for (const c of b.content) {
    if (c.type === 'text') texts.push(c.text);
    else if (c.type === 'image') images.push({ type: 'image', source: c.source });
    else if (c.type === 'document') { const { cache_control: _cc, ...doc } = c; images.push(doc); }
    else texts.push(referenceText(c.tool_name));
  }
  const head = `${b.is_error === true ? 'Error from' : 'Result of'} ${tool} (call ${b.tool_use_id}):`;
  const body = texts.join('\n');
  const kind = images.every((c) => c.type === 'image') ? 'image' : 'file';
  const out: Block[] = [{ type: 'text', text: body === '' ? `${head} ${images.length === 0 ? '(no output)' : images.length === 1 ? `(${kind} below)` : `(${kind}s below)`}` : `${head}\n${body}` }, ...images];
  if (b.cache_control !== undefined) out[out.length - 1] = withCache(out[out.length - 1] as TextBlock | ImageBlock | DocumentBlock, b.cache_control);
  return out;
}

const withCache = <B extends TextBlock | ImageBlock | DocumentBlock>(b: B, cc: TextBlock['cache_control']): B => (cc === undefined ? b : { ...b, cache_control: cc });
