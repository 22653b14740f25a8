// Deterministic content shared by the mocks: reply text, token estimates, ids, tool arguments
// generated from JSON Schema, stop sequences, max-token truncation and stream splitting.
import { createHash } from 'node:crypto';

/** Input tokens are estimated as ceil(characters / 4) of all input text. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** Output tokens are the number of whitespace-separated words of the output. */
export function countWords(text: string): number {
  const t = text.trim();
  return t === '' ? 0 : t.split(/\s+/).length;
}

/** The default reply: `Echo: ` and the first 40 characters of the last user message. */
export function echoReply(lastUser: string): string {
  return `Echo: ${lastUser.slice(0, 40)}`;
}

/** The reply after a tool result: the result's first 60 characters, quoted. */
export function toolResultReply(result: string): string {
  return `The tool returned: ${result.slice(0, 60)}`;
}

/** The reasoning text of thinking models, before the answer. */
export function thinkingText(lastUser: string): string {
  return `Let me think about "${lastUser.slice(0, 40)}" step by step before answering.`;
}

/**
 * A stable signature for a thinking block, specific to its issuer as real signatures are (Claude's,
 * on Anthropic and Bedrock alike: `anthropic`; Gemini's per model: `gemini:<model>`): base64 of the
 * issuer, a NUL, and SHA-256 over issuer and text.
 */
export function signatureFor(text: string, issuer = 'anthropic'): string {
  const digest = createHash('sha256').update(`sig:${issuer}:${text}`).digest();
  return Buffer.concat([Buffer.from(`${issuer}\0`), digest]).toString('base64');
}

/** Who issued a signature made by signatureFor, or null for anything else (a foreign or corrupted one). */
export function signatureIssuer(sig: string): string | null {
  const bytes = Buffer.from(sig, 'base64');
  const nul = bytes.indexOf(0);
  if (nul <= 0 || bytes.length !== nul + 33 || bytes.toString('base64') !== sig) return null;
  return bytes.subarray(0, nul).toString('utf8');
}

/**
 * What the user wrote, without the context a coding agent adds to the user turn: Claude Code puts
 * `<system-reminder>` blocks there (its environment, attribution rules), which mention tools.
 */
const userWords = (lastUser: string): string => lastUser.replace(/<system-reminder>[\s\S]*?(<\/system-reminder>|$)/g, ' ');

/** True when the user asks for a tool: the words "weather" or "tool" (any case). */
export function wantsTool(lastUser: string): boolean {
  return /\b(weather|tools?)\b/i.test(userWords(lastUser));
}

/** True when the user asks for two parallel tool calls: the word "both". */
export function wantsBoth(lastUser: string): boolean {
  return /\bboth\b/i.test(userWords(lastUser));
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Deterministic id generator: same seed and counter, same id, across runs. */
export class IdSource {
  #n = 0;
  next(prefix: string, length: number): string {
    const digest = createHash('sha256').update(`${prefix}:${this.#n++}`).digest();
    let out = '';
    for (let i = 0; i < length; i++) out += ALPHABET[digest[i % digest.length]! % ALPHABET.length];
    return prefix + out;
  }
  reset(): void {
    this.#n = 0;
  }
}

/** Canonical JSON: object keys sorted, so equal values hash equally. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    const keys = Object.keys(o).filter((k) => o[k] !== undefined).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

const STRING_BY_NAME: Record<string, [string, string]> = {
  location: ['Paris', 'London'],
  city: ['Paris', 'London'],
  query: ['weather', 'news'],
  unit: ['celsius', 'fahrenheit'],
  country: ['France', 'United Kingdom'],
};

/**
 * Arguments generated from a JSON Schema, deterministic per `variant` (0 or 1): strings by
 * property name (location/city -> Paris/London), enums take their first (or second) value,
 * numbers 1 (2), booleans true, arrays one item, objects every declared property.
 */
export function argsFromSchema(schema: unknown, variant = 0, name = ''): unknown {
  const s = (schema !== null && typeof schema === 'object' ? schema : {}) as Record<string, unknown>;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[Math.min(variant, s.enum.length - 1)];
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  const props = s.properties as Record<string, unknown> | undefined;
  if (type === 'object' || (type === undefined && props)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(props ?? {})) out[k] = argsFromSchema(v, variant, k);
    return out;
  }
  switch (type) {
    case 'string': {
      const byName = STRING_BY_NAME[name.toLowerCase()];
      return byName ? byName[variant % 2] : variant === 0 ? `example ${name}`.trim() : `other ${name}`.trim();
    }
    case 'integer':
    case 'number':
      return variant + 1;
    case 'boolean':
      return true;
    case 'array':
      return [argsFromSchema(s.items, variant, name)];
    default:
      return null;
  }
}

export interface Generated {
  text: string;
  /** Why generation ended, provider-neutral. */
  finish: 'stop' | 'stop_sequence' | 'length';
  /** The stop sequence that matched, when finish is 'stop_sequence'. */
  stopSequence?: string;
}

/**
 * Applies stop sequences (cut at the earliest match) then `maxTokens` (keep that many words).
 */
export function finishText(text: string, stop: readonly string[], maxTokens: number | undefined): Generated {
  let out: Generated = { text, finish: 'stop' };
  let cut = -1;
  for (const seq of stop) {
    const at = seq === '' ? -1 : text.indexOf(seq);
    if (at >= 0 && (cut < 0 || at < cut)) {
      cut = at;
      out = { text: text.slice(0, at), finish: 'stop_sequence', stopSequence: seq };
    }
  }
  if (maxTokens !== undefined && countWords(out.text) > maxTokens) {
    const words = out.text.match(/\S+\s*/g) ?? [];
    return { text: words.slice(0, maxTokens).join('').trimEnd(), finish: 'length' };
  }
  return out;
}

/** Splits text into stream deltas of about two words each (at least two pieces when possible). */
export function splitText(text: string): string[] {
  const words = text.match(/\s*\S+/g) ?? [];
  if (words.length === 0) return text === '' ? [] : [text];
  if (words.length === 1) {
    const w = words[0]!;
    return w.length > 1 ? [w.slice(0, Math.ceil(w.length / 2)), w.slice(Math.ceil(w.length / 2))] : [w];
  }
  const out: string[] = [];
  for (let i = 0; i < words.length; i += 2) out.push(words.slice(i, i + 2).join(''));
  return out;
}

/** Splits a JSON string (tool arguments) into about `parts` pieces of raw characters. */
export function splitJson(json: string, parts = 3): string[] {
  if (json.length <= 1) return [json];
  const size = Math.max(1, Math.ceil(json.length / parts));
  const out: string[] = [];
  for (let i = 0; i < json.length; i += size) out.push(json.slice(i, i + size));
  return out;
}
