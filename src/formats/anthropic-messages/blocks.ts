// Content blocks of the Messages API <-> canonical blocks. The canonical model is shaped after
// Anthropic's, so this is mostly a careful copy that keeps only the fields the model knows.
import type { Block, CacheControl, DocumentBlock, ImageBlock, TextBlock, Tool, ToolChangeBlock, ToolChangeTarget, ToolReferenceBlock, ToolResultBlock, ToolUseBlock } from '../canonical.ts';
import { GatewayError } from '../../gateway-error.ts';
import { isRecord } from '../errors.ts';

type Rec = Record<string, unknown>;

/** Thrown for a well-formed block the gateway cannot carry (server tools, search results...). */
export const unsupportedBlock = (param: string, type: unknown): GatewayError =>
  new GatewayError('unsupported_parameter', `content block type '${String(type)}' is not supported by this gateway`, { param });

export function cacheControlOf(v: unknown): CacheControl | undefined {
  if (!isRecord(v) || v.type !== 'ephemeral') return undefined;
  return v.ttl === '5m' || v.ttl === '1h' ? { type: 'ephemeral', ttl: v.ttl } : { type: 'ephemeral' };
}

function withCache<T extends { cache_control?: CacheControl }>(block: T, raw: Rec): T {
  const cc = cacheControlOf(raw.cache_control);
  if (cc) block.cache_control = cc;
  return block;
}

export function textBlock(raw: Rec): TextBlock {
  return withCache<TextBlock>({ type: 'text', text: String(raw.text ?? '') }, raw);
}

function imageBlock(raw: Rec, param: string): ImageBlock {
  const s = isRecord(raw.source) ? raw.source : {};
  if (s.type === 'base64') return withCache<ImageBlock>({ type: 'image', source: { type: 'base64', media_type: String(s.media_type), data: String(s.data) } }, raw);
  if (s.type === 'url') return withCache<ImageBlock>({ type: 'image', source: { type: 'url', url: String(s.url) } }, raw);
  throw new GatewayError('unsupported_parameter', `image source type '${String(s.type)}' is not supported`, { param: `${param}.source.type` });
}

function documentBlock(raw: Rec, param: string, lenient: boolean): DocumentBlock | null {
  const s = isRecord(raw.source) ? raw.source : {};
  let source: DocumentBlock['source'];
  if (s.type === 'base64') source = { type: 'base64', media_type: String(s.media_type), data: String(s.data) };
  else if (s.type === 'url') source = { type: 'url', url: String(s.url) };
  else if (s.type === 'text') source = { type: 'text', media_type: 'text/plain', data: String(s.data) };
  else if (lenient) return null;
  else throw new GatewayError('unsupported_parameter', `document source type '${String(s.type)}' is not supported`, { param: `${param}.source.type` });
  const doc = withCache<DocumentBlock>({ type: 'document', source }, raw);
  if (typeof raw.title === 'string') doc.title = raw.title;
  if (typeof raw.context === 'string') doc.context = raw.context;
  return doc;
}

/**
 * One wire block -> canonical. `param` is the field path used in errors. With `lenient` (decoding
 * upstream responses) blocks the model cannot hold yield null instead of an error.
 */
export function decodeBlock(raw: Rec, param: string, lenient = false): Block | null {
  switch (raw.type) {
    case 'text': return textBlock(raw);
    case 'image': return imageBlock(raw, param);
    case 'document': return documentBlock(raw, param, lenient);
    case 'tool_use': return withCache<ToolUseBlock>({ type: 'tool_use', id: String(raw.id), name: String(raw.name), input: raw.input ?? {} }, raw);
    case 'tool_result': {
      const content: ToolResultBlock['content'] = typeof raw.content === 'string'
        ? [{ type: 'text', text: raw.content }]
        : (Array.isArray(raw.content) ? raw.content : []).flatMap((c: Rec, j): ToolResultBlock['content'] => {
          if (c.type === 'text') return [textBlock(c)];
          if (c.type === 'image') return [imageBlock(c, `${param}.content[${j}]`)];
          // Anthropic takes documents in tool results (a tool that fetched a PDF or a page).
          if (c.type === 'document') { const d = documentBlock(c, `${param}.content[${j}]`, lenient); return d ? [d] : []; }
          if (c.type === 'tool_reference') return [withCache<ToolReferenceBlock>({ type: 'tool_reference', tool_name: String(c.tool_name) }, c)];
          if (lenient) return [];
          throw unsupportedBlock(`${param}.content[${j}].type`, c.type);
        });
      const block = withCache<ToolResultBlock>({ type: 'tool_result', tool_use_id: String(raw.tool_use_id), content }, raw);
      if (typeof raw.is_error === 'boolean') block.is_error = raw.is_error;
      return block;
    }
    case 'thinking': return { type: 'thinking', thinking: String(raw.thinking ?? ''), signature: String(raw.signature ?? '') };
    case 'redacted_thinking': return { type: 'redacted_thinking', data: String(raw.data ?? '') };
    default:
      if (lenient) return null;
      throw unsupportedBlock(`${param}.type`, raw.type);
  }
}

export function decodeBlocks(content: unknown, param: string, lenient = false): Block[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return [];
  return content.flatMap((b: unknown, i) => {
    const d = isRecord(b) ? decodeBlock(b, `${param}[${i}]`, lenient) : null;
    return d ? [d] : [];
  });
}

/** A validated block of a system message: text, or a tool change (src/formats/canonical.ts, ToolChangeBlock). */
export function decodeSystemBlock(raw: Rec, param: string): TextBlock | ToolChangeBlock {
  if (raw.type === 'text') return textBlock(raw);
  const t = isRecord(raw.tool) ? raw.tool : {};
  let tool: ToolChangeTarget;
  if (t.type === 'tool_definition') tool = { type: 'tool_definition', definition: decodeTool(isRecord(t.definition) ? t.definition : {}, `${param}.tool.definition`) };
  else if (t.type === 'mcp_tool_reference') tool = { type: 'mcp_tool_reference', server_name: String(t.server_name), name: String(t.name) };
  else if (t.type === 'mcp_toolset_reference') tool = { type: 'mcp_toolset_reference', server_name: String(t.server_name) };
  else tool = { type: 'tool_reference', name: String(t.name) };
  return withCache<ToolChangeBlock>({ type: raw.type === 'tool_removal' ? 'tool_removal' : 'tool_addition', tool }, raw);
}

/**
 * Canonical block -> wire. Canonical blocks are already wire-shaped, so this is a shallow copy
 * (no deep clone: image and document payloads can be megabytes); a tool_use always has an input, a
 * tool definition is written as `tools` entries are.
 */
export function encodeBlock(b: Block): Rec {
  // OpenAI's image `detail` has no Anthropic field: an unknown key in a block is a 400 there.
  if (b.type === 'image') return imageWire(b);
  if (b.type === 'tool_result' && b.content.some((c) => c.type === 'image' && c.detail !== undefined)) {
    return { ...b, content: b.content.map((c) => (c.type === 'image' ? imageWire(c) : c)) };
  }
  if (b.type === 'tool_use') {
    // raw_arguments is the gateway's own (arguments an OpenAI-format model wrote as text): not Anthropic's.
    const { raw_arguments: _raw, ...rest } = b;
    return { ...rest, input: b.input ?? {} };
  }
  if ((b.type === 'tool_addition' || b.type === 'tool_removal') && b.tool.type === 'tool_definition') {
    return { ...b, tool: { type: 'tool_definition', definition: encodeTool(b.tool.definition) } };
  }
  return { ...b };
}

function imageWire(b: ImageBlock): Rec {
  const { detail: _detail, ...rest } = b;
  return rest;
}

export function decodeTool(raw: Rec, param: string): Tool {
  if (raw.type !== undefined && raw.type !== null && raw.type !== 'custom') {
    throw new GatewayError('unsupported_parameter', `server tool '${String(raw.type)}' is not supported by this gateway`, { param: `${param}.type` });
  }
  const tool = withCache<Tool>({ name: String(raw.name), input_schema: isRecord(raw.input_schema) ? raw.input_schema : { type: 'object' } }, raw);
  if (typeof raw.description === 'string') tool.description = raw.description;
  if (typeof raw.strict === 'boolean') tool.strict = raw.strict;
  if (raw.defer_loading === true) tool.defer_loading = true;
  return tool;
}

export function encodeTool(t: Tool): Rec {
  const out: Rec = { name: t.name };
  if (t.description !== undefined) out.description = t.description;
  out.input_schema = t.input_schema;
  if (t.strict !== undefined) out.strict = t.strict;
  if (t.defer_loading) out.defer_loading = true;
  if (t.cache_control) out.cache_control = t.cache_control;
  return out;
}
