// What of a Responses body only a server of the Responses API itself can act on, and the body as the
// router reads it to rank. The translator (decode-request.ts) refuses OpenAI's hosted-tool items in
// `input` (web_search_call and the other calls and outputs the API runs or defines: ResponseInputItem
// in the openai package), item references, OpenAI's own compaction items and a `tool_choice` forcing a
// hosted tool, since no other target can take them; a native relay (passthrough.ts) sends them as
// they are. The router must not refuse such a conversation before ranking, only keep it to the
// candidates that relay the API natively: routing reads it here, leniently, with each such item's text
// counted in its place. Hosted tools merely offered in `tools` are no requirement: a translated target
// leaves them out and says so (x-gateway-adjustments), as it always has. Images and files sent by the
// API's own file id (`file_id`, uploaded to the Files API) are another thing only the API can read: a
// message holding one is ranked with the part read as a reference by URL (counted as an image or a
// document by URL is), and kept to native candidates, which get the id as sent.
import type { CanonicalRequest } from '../canonical.ts';
import { isRecord } from '../errors.ts';
import { decodeResponsesRequest } from './decode-request.ts';
import { unpackCompaction } from './items.ts';
import { parseDataUrl } from '../openai-chat/decode-request.ts';

type Rec = Record<string, unknown>;

/** Input item types the translator reads (items.ts decodeInput); every other type is the API's own. */
const TRANSLATED_ITEMS: ReadonlySet<string> = new Set([
  'message', 'function_call', 'custom_tool_call', 'function_call_output', 'custom_tool_call_output', 'reasoning', 'compaction',
]);

/** tool_choice types the translator maps (tools.ts decodeToolChoice); any other names a tool the API runs. */
const TRANSLATED_CHOICES: ReadonlySet<string> = new Set(['function', 'custom', 'allowed_tools']);

/** Fields of an item that are no text a model reads: ids, kinds, states, opaque tokens. */
const NOT_TEXT: ReadonlySet<string> = new Set(['id', 'type', 'status', 'call_id', 'encrypted_content']);

/** A string this long without a space is data (an image's base64, a token), not text: its tokens are not counted as text. */
const OPAQUE_CHARS = 1024;

/** Whether `it` (an input item) can only be read by a Responses server: the API's own item types, or a compaction the gateway did not make. */
function nativeOnlyItem(it: Rec): boolean {
  const type = typeof it.type === 'string' ? it.type : 'message';
  if (!TRANSLATED_ITEMS.has(type)) return true;
  return type === 'compaction' && (typeof it.encrypted_content !== 'string' || unpackCompaction(it.encrypted_content) === null);
}

/** What a part by file id is read as for ranking: a reference no target is sent (the native relay sends the body as it came). */
const FILE_REF = 'openai-file:';

/**
 * A content part by the API's own file id, which the translator cannot send on (items.ts inputPart),
 * as the part by reference it is ranked as; null for any other part.
 */
function byFileId(p: unknown): Rec | null {
  if (!isRecord(p) || typeof p.file_id !== 'string') return null;
  const { file_id: id, ...rest } = p;
  if (p.type === 'input_image' && typeof p.image_url !== 'string') return { ...rest, image_url: `${FILE_REF}${id}` };
  const inline = typeof p.file_data === 'string' && parseDataUrl(p.file_data) !== null;
  if (p.type === 'input_file' && typeof p.file_url !== 'string' && !inline) {
    const { file_data: _, ...kept } = rest;
    return { ...kept, file_url: `${FILE_REF}${id}` };
  }
  return null;
}

/** A message item with its parts by file id read as references (listed in `nativeOnly` as `input[i].content[j]`), or null when it has none. */
function withFileRefs(it: Rec, i: number, nativeOnly: string[]): Rec | null {
  if (!Array.isArray(it.content)) return null;
  let content: unknown[] | null = null;
  it.content.forEach((p: unknown, j) => {
    const ref = byFileId(p);
    if (ref !== null) {
      nativeOnly.push(`input[${i}].content[${j}] ${String(ref.type)} file_id`);
      content ??= (it.content as unknown[]).slice(0, j);
      content.push(ref);
    } else if (content !== null) content.push(p);
  });
  return content === null ? null : { ...it, content };
}

/**
 * The text an item carries (queries, URLs, code, logs, arguments, outputs), for the prompt's token
 * count; false when it also carries what cannot be counted as text (data, or sealed content).
 */
function itemText(v: unknown, out: string[]): boolean {
  if (typeof v === 'string') {
    if (v === '') return true;
    if (v.length < OPAQUE_CHARS || v.includes(' ')) { out.push(v); return true; }
    return false;
  }
  let counted = true;
  if (Array.isArray(v)) { for (const x of v) counted = itemText(x, out) && counted; return counted; }
  if (!isRecord(v)) return true;
  for (const k in v) {
    if (k === 'encrypted_content' && typeof v[k] === 'string' && v[k] !== '') counted = false;
    else if (!NOT_TEXT.has(k)) counted = itemText(v[k], out) && counted;
  }
  return counted;
}

/**
 * The message an item only a Responses server reads stands for when ranking: its text, from the side
 * that wrote it (an item of the API's `*_output` kinds, or an approval, comes from the client), or
 * null when it carries none (an OpenAI compaction: its text is sealed).
 */
function standIn(it: Rec, texts: string[]): Rec | null {
  if (texts.length === 0) return null;
  const type = String(it.type);
  const fromClient = type.endsWith('_output') || type === 'mcp_approval_response';
  return fromClient
    ? { type: 'message', role: 'user', content: [{ type: 'input_text', text: texts.join('\n') }] }
    : { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: texts.join('\n') }] };
}

export type RankingRead = {
  req: CanonicalRequest;
  /** What only a Responses server can read, as `input[2] web_search_call` or `tool_choice web_search_preview`; empty for most requests. */
  nativeOnly: string[];
  /**
   * Those of them whose tokens the read cannot count (an OpenAI compaction's sealed text, a
   * screenshot's data): the prompt's count is short of what the upstream will bill by an unknown amount.
   */
  uncounted: string[];
};

/**
 * A validated Responses body as the router ranks it: decodeResponsesRequest's reading, except that
 * what only a Responses server can read is listed in `nativeOnly` instead of refused, each such input
 * item's text standing in its place (its tokens cost as much wherever it is counted). A body without
 * any is decoded exactly as the translator decodes it (the same object, not a copy).
 */
export function readForRanking(body: Rec): RankingRead {
  const nativeOnly: string[] = [];
  const uncounted: string[] = [];
  let input: unknown = body.input;
  if (Array.isArray(body.input)) {
    let out: unknown[] | null = null;
    body.input.forEach((it: unknown, i) => {
      const native = isRecord(it) && nativeOnlyItem(it);
      if (native) {
        const what = `input[${i}] ${typeof it.type === 'string' ? it.type : 'message'}`;
        nativeOnly.push(what);
        out ??= (body.input as unknown[]).slice(0, i);
        const texts: string[] = [];
        // An item_reference stands for an item the server holds: its tokens are not in the request.
        if (!itemText(it, texts) || it.type === 'item_reference') uncounted.push(what);
        const s = standIn(it, texts);
        if (s !== null) out.push(s);
      } else {
        const refs = isRecord(it) ? withFileRefs(it, i, nativeOnly) : null;
        if (refs !== null) out ??= (body.input as unknown[]).slice(0, i);
        if (out !== null) out.push(refs ?? it);
      }
    });
    if (out !== null) input = out;
  }
  const tc = body.tool_choice;
  const hostedChoice = isRecord(tc) && typeof tc.type === 'string' && !TRANSLATED_CHOICES.has(tc.type);
  if (hostedChoice) nativeOnly.push(`tool_choice ${String(tc.type)}`);
  if (nativeOnly.length === 0) return { req: decodeResponsesRequest(body), nativeOnly, uncounted };
  // A forced hosted tool is the server's to run: for ranking, the model may answer or call a tool.
  const read: Rec = { ...body, input };
  if (hostedChoice) read.tool_choice = 'auto';
  return { req: decodeResponsesRequest(read), nativeOnly, uncounted };
}
