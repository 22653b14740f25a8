// Tool call ids a target accepts. A conversation carries the ids of its earlier tool calls (in the
// assistant's calls and in the results that answer them), and those ids were made by whoever made
// the calls: another provider (the router or a fallback moved the conversation), or the client
// itself. Providers limit them and refuse the whole request otherwise: OpenAI's Chat Completions at
// most 40 characters ("string too long. Expected a string with maximum length 40"), Anthropic's
// Messages letters, digits, '_' and '-' (`^[a-zA-Z0-9_-]+$`), Bedrock's Converse the same in at most
// 64, Mistral exactly 9 letters or digits ("Tool call id was call_0fypS1hVX but must be a-z, A-Z,
// 0-9, with a length of 9"). An id the target would refuse is replaced by one made from it (a hash:
// the same id always gives the same replacement, so a call and its result still match, turn after
// turn), and only in what goes upstream: the client keeps its own ids.
import { createHash } from 'node:crypto';
import type { CanonicalRequest, Message } from './canonical.ts';
import type { WireFormat } from './codec.ts';
import { isRecord } from './errors.ts';

/**
 * What a target accepts: `any` character, `word` (letters, digits, '_', '-') or `alnum` (letters and
 * digits); `length` exactly, or at most `max_length`.
 */
export type ToolIdRule = { alphabet: 'any' | 'word' | 'alnum'; length?: number; max_length?: number };

/** Each wire format's own limits (a provider file's `tool_call_ids` replaces them: Mistral's). */
export const FORMAT_TOOL_IDS: Readonly<Record<WireFormat, ToolIdRule | null>> = {
  'openai-chat': { alphabet: 'any', max_length: 40 },
  'anthropic-messages': { alphabet: 'word' },
  'bedrock-converse': { alphabet: 'word', max_length: 64 },
  // Gemini's function call ids are optional and free-form.
  gemini: null,
};

/** 0-9, A-Z, a-z (a UTF-16 code unit). */
export const isAlnumCode = (c: number): boolean => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
/** Letters, digits, '_' and '-': what most APIs take in ids and tool names. */
export const isWordCode = (c: number): boolean => isAlnumCode(c) || c === 95 || c === 45;

/** Whether `id` is acceptable under `rule` (a character loop: agents resend every earlier id on each turn). */
export function fitsRule(id: string, rule: ToolIdRule): boolean {
  const n = id.length;
  if (n === 0) return false;
  if (rule.length !== undefined ? n !== rule.length : rule.max_length !== undefined && n > rule.max_length) return false;
  if (rule.alphabet === 'any') return true;
  const fits = rule.alphabet === 'word' ? isWordCode : isAlnumCode;
  for (let i = 0; i < n; i++) if (!fits(id.charCodeAt(i))) return false;
  return true;
}

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** `n` letters and digits from the SHA-256 of `text` (stable: the same text always gives the same characters). */
export function hashChars(text: string, n: number): string {
  const digest = createHash('sha256').update(text).digest();
  let out = '';
  // 32 bytes give 32 characters (each byte mod 62: a slight bias, irrelevant for uniqueness at these lengths).
  for (let i = 0; i < n; i++) out += BASE62[digest[i % digest.length]! % 62];
  return out;
}

/** The replacement for an id `rule` refuses: letters and digits from its SHA-256, 24 long unless the rule says otherwise. */
export function replacementId(id: string, rule: ToolIdRule): string {
  return hashChars(id, rule.length ?? Math.min(rule.max_length ?? 24, 24));
}

/** Replaces refused ids through `seen` (one replacement per distinct id in a request), counting replacements. */
class IdMap {
  readonly #rule: ToolIdRule;
  readonly #seen = new Map<string, string>();
  constructor(rule: ToolIdRule) { this.#rule = rule; }
  get replaced(): number { return this.#seen.size; }
  of(id: string): string {
    if (fitsRule(id, this.#rule)) return id;
    let r = this.#seen.get(id);
    if (r === undefined) { r = replacementId(id, this.#rule); this.#seen.set(id, r); }
    return r;
  }
}

const adjustment = (n: number): string => `tool_call_ids=replaced(${n})`;

/** A canonical request with the ids `rule` refuses replaced (the same object when none is), and the adjustment to report. */
export function fitCanonicalToolIds(req: CanonicalRequest, rule: ToolIdRule | null): { req: CanonicalRequest; adjustment: string | null } {
  if (rule === null) return { req, adjustment: null };
  const map = new IdMap(rule);
  let messages: Message[] | null = null;
  req.messages.forEach((m, i) => {
    let content: Message['content'] | null = null;
    m.content.forEach((b, j) => {
      const id = b.type === 'tool_use' ? b.id : b.type === 'tool_result' ? b.tool_use_id : null;
      if (id === null) return;
      const to = map.of(id);
      if (to === id) return;
      content ??= m.content.slice();
      content[j] = b.type === 'tool_use' ? { ...b, id: to } : { ...b, tool_use_id: to } as typeof b;
    });
    if (content) { messages ??= req.messages.slice(); messages[i] = { ...m, content }; }
  });
  return messages ? { req: { ...req, messages }, adjustment: adjustment(map.replaced) } : { req, adjustment: null };
}

type Rec = Record<string, unknown>;

/**
 * The same on a relayed client body, on the copy the relay made (the `messages` array and each message
 * changed are copied, the client's body is not touched): Chat Completions' `tool_calls[].id` and
 * `tool_call_id`, Messages' `tool_use.id` and `tool_result.tool_use_id`. Nothing is allocated for a
 * body whose ids all fit (every request an agent sends). Returns the adjustment, or null.
 */
export function fitRelayedToolIds(body: Rec, format: WireFormat, rule: ToolIdRule | null): string | null {
  if (rule === null || !Array.isArray(body.messages)) return null;
  const map = new IdMap(rule);
  const messages = body.messages as unknown[];
  let copied: unknown[] | null = null;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (!isRecord(m)) continue;
    const next = format === 'openai-chat' ? fitChatMessage(m, map) : fitBlocks(m, map);
    if (next !== m) { copied ??= messages.slice(); copied[i] = next; }
  }
  if (copied === null) return null;
  body.messages = copied;
  return adjustment(map.replaced);
}

/** A Chat Completions message with its call ids fitted (the same object when they fit). */
function fitChatMessage(m: Rec, map: IdMap): Rec {
  if (typeof m.tool_call_id === 'string') {
    const to = map.of(m.tool_call_id);
    return to === m.tool_call_id ? m : { ...m, tool_call_id: to };
  }
  if (!Array.isArray(m.tool_calls)) return m;
  let calls: unknown[] | null = null;
  for (let k = 0; k < m.tool_calls.length; k++) {
    const c: unknown = m.tool_calls[k];
    if (!isRecord(c) || typeof c.id !== 'string') continue;
    const to = map.of(c.id);
    if (to !== c.id) { calls ??= m.tool_calls.slice(); calls[k] = { ...c, id: to }; }
  }
  return calls ? { ...m, tool_calls: calls } : m;
}

/** A Messages turn with its tool_use and tool_result ids fitted (the same object when they fit). */
function fitBlocks(m: Rec, map: IdMap): Rec {
  if (!Array.isArray(m.content)) return m;
  let blocks: unknown[] | null = null;
  for (let k = 0; k < m.content.length; k++) {
    const b: unknown = m.content[k];
    if (!isRecord(b)) continue;
    const type = b.type;
    if (type === 'tool_use') {
      const id = b.id;
      if (typeof id !== 'string') continue;
      const to = map.of(id);
      if (to !== id) { blocks ??= m.content.slice(); blocks[k] = { ...b, id: to }; }
    } else if (type === 'tool_result') {
      const id = b.tool_use_id;
      if (typeof id !== 'string') continue;
      const to = map.of(id);
      if (to !== id) { blocks ??= m.content.slice(); blocks[k] = { ...b, tool_use_id: to }; }
    }
  }
  return blocks ? { ...m, content: blocks } : m;
}
