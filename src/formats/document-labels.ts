// A document's `title` and `context` (Anthropic's Messages): Anthropic shows both to the model with the
// document ("passed to the model but not used towards cited content"). OpenAI's Chat Completions, Gemini
// and Bedrock's Converse have no context field, and only some of their document parts have a name, so a
// translated conversation lost them without a word. The model reads them as text just before the
// document instead: the user's words about the document reach it either way.
import type { Block, CanonicalRequest, DocumentBlock, Message } from './canonical.ts';
import type { WireFormat } from './codec.ts';

/**
 * Whether the target's part for `d` carries its title itself: OpenAI's `file.filename` (inline files;
 * a text document becomes plain text there), Bedrock's document `name` (every document), nothing on
 * Gemini (inline data has no name). Anthropic keeps both fields.
 */
const NAMES_DOCUMENT: Readonly<Record<WireFormat, (d: DocumentBlock) => boolean>> = {
  'anthropic-messages': () => true,
  'openai-chat': (d) => d.source.type === 'base64',
  'bedrock-converse': () => true,
  gemini: () => false,
};

/** The text put before a document: its title (when the target's part cannot name it) and its context. */
function label(d: DocumentBlock, format: WireFormat): { text: string; fields: string[] } | null {
  const lines: string[] = [];
  const fields: string[] = [];
  if (d.title !== undefined && d.title !== '' && !NAMES_DOCUMENT[format](d)) { lines.push(`Document title: ${d.title}`); fields.push('title'); }
  if (d.context !== undefined && d.context !== '') { lines.push(`Document context: ${d.context}`); fields.push('context'); }
  return lines.length === 0 ? null : { text: lines.join('\n'), fields };
}

const labelled = (d: DocumentBlock): boolean => (d.title !== undefined && d.title !== '') || (d.context !== undefined && d.context !== '');
const hasLabels = (m: Message): boolean => m.content.some((b) => (b.type === 'document' && labelled(b))
  || (b.type === 'tool_result' && b.content.some((c) => c.type === 'document' && labelled(c))));

/**
 * The request as `format` must see it (the same object when no document has a title or context the
 * target cannot hold): each such document, in a turn or inside a tool result, gets its `label`, which
 * the target's encoder writes as a text part just before it (blocks are not inserted, so every other
 * field path the encoders report keeps its index). Reported per field, `messages[i].content[j].context->text`
 * (and `.content[k]` inside a tool result).
 */
export function labelDocuments(req: CanonicalRequest, format: WireFormat): { req: CanonicalRequest; adjustments: string[] } {
  if (format === 'anthropic-messages' || !req.messages.some(hasLabels)) return { req, adjustments: [] };
  const adjustments: string[] = [];
  const labelled = (d: DocumentBlock, at: string): DocumentBlock => {
    const l = label(d, format);
    if (l === null) return d;
    for (const f of l.fields) adjustments.push(`${at}.${f}->text`);
    return { ...d, label: l.text };
  };
  const messages = req.messages.map((m, i): Message => {
    if (!hasLabels(m)) return m;
    const content = m.content.map((b, j): Block => {
      if (b.type === 'document') return labelled(b, `messages[${i}].content[${j}]`);
      if (b.type !== 'tool_result' || !b.content.some((c) => c.type === 'document')) return b;
      return { ...b, content: b.content.map((c, k) => (c.type === 'document' ? labelled(c, `messages[${i}].content[${j}].content[${k}]`) : c)) };
    });
    return { ...m, content };
  });
  return adjustments.length === 0 ? { req, adjustments } : { req: { ...req, messages }, adjustments };
}
