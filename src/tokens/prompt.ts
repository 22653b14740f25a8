// Walks a canonical request into what token counting needs: the text of each message in order,
// and the parts no local tokenizer can count exactly (images, binary documents, tool definitions).
import type { Block, CanonicalRequest, ImageDetail } from '../formats/canonical.ts';
import { toolsInContext } from '../formats/tool-search.ts';
import { argumentsText } from '../formats/tool-arguments.ts';
import { imageSizeOf, type ImageSize } from './image-size.ts';

export type PromptParts = {
  /** One entry per message as the model sees it (the system prompt first when present). */
  messages: Array<{ role: string; texts: string[] }>;
  /** Tool definitions, each as the JSON the provider renders (name, description, schema). */
  tools: string[];
  /** Per image in order (their count is the request's images), its width and height read from an inline image's header; null for a URL or an unreadable header. */
  imageSizes: Array<ImageSize | null>;
  /** Per image in order, the `detail` the client asked for (OpenAI formats), or null (none given). */
  imageDetails: Array<ImageDetail | null>;
  /** Binary documents (PDF and such): their size in base64 characters (0 for a URL). */
  documents: number[];
  /** Tool calls and tool results inside messages (their framing is not public). */
  toolTurns: number;
};

function blockTexts(b: Block, out: PromptParts, texts: string[]): void {
  switch (b.type) {
    case 'text': texts.push(b.text); return;
    case 'thinking': texts.push(b.thinking); return;
    case 'redacted_thinking': return;
    case 'image':
      out.imageSizes.push(b.source.type === 'base64' ? imageSizeOf(b.source.data) : null);
      out.imageDetails.push(b.detail ?? null);
      return;
    case 'document':
      if (b.source.type === 'text') texts.push(b.source.data);
      else out.documents.push(b.source.type === 'base64' ? b.source.data.length : 0);
      return;
    case 'tool_use':
      out.toolTurns++;
      texts.push(b.name, argumentsText(b));
      return;
    case 'tool_result':
      out.toolTurns++;
      for (const c of b.content) if (c.type === 'tool_reference') texts.push(c.tool_name); else blockTexts(c, out, texts);
      return;
  }
}

export function promptParts(req: CanonicalRequest): PromptParts {
  const out: PromptParts = { messages: [], tools: [], imageSizes: [], imageDetails: [], documents: [], toolTurns: 0 };
  if (req.system.length > 0) out.messages.push({ role: 'system', texts: req.system.map((b) => b.text) });
  for (const m of req.messages) {
    const texts: string[] = [];
    for (const b of m.content) blockTexts(b, out, texts);
    out.messages.push({ role: m.role, texts });
  }
  // Deferred tools a client-side search has not loaded are not in the model's context (src/formats/tool-search.ts).
  for (const t of toolsInContext(req)) out.tools.push(JSON.stringify({ name: t.name, description: t.description ?? '', parameters: t.input_schema }));
  if (req.response_format?.type === 'json_schema') out.tools.push(JSON.stringify(req.response_format.schema));
  return out;
}

