// Conversation affinity: a follow-up whose earlier turns match a recent routed conversation
// prefers the model that served it (its prompt cache holds that prefix, so cache prices apply).
// Keyed by SHA-256 over the API key id, the system prompt and every message of the earlier request,
// each text by its length, its first and its last SAMPLE characters (so a key costs O(blocks), not
// O(conversation): an agent's conversation grows by a tool result a turn and is keyed twice per
// request); a follow-up is looked up by its messages minus the trailing user turn(s) and the
// assistant answer before them. Bounded: at most maxEntries (least recently used go first), each for
// ttlMs. With Redis, replicas share what they remember (affinity-share.ts); lookups stay local.
import { hash } from 'node:crypto';
import type { Block, CanonicalRequest, DocumentSource, ImageSource, Message } from '../formats/canonical.ts';

type Entry = { id: string; tokens: number; until: number };

/**
 * Characters kept from each end of a long text. Two conversations of one key that differ only inside
 * a long text, away from both ends, with everything else equal, share a key: the follow-up then
 * prefers a model whose cache holds the conversation up to that difference (prompt caches are
 * prefix caches), with the cached tokens overstated; routing stays within every constraint.
 */
const SAMPLE = 64;
const sample = (s: string): string => (s.length <= 2 * SAMPLE ? s : `${s.slice(0, SAMPLE)}\u0004${s.slice(-SAMPLE)}`);
const part = (s: string): string => `${s.length}:${sample(s)}`;

/** An image or document source: its data sampled (base64 runs to megabytes), its URL whole. */
const sourceKey = (s: ImageSource | DocumentSource): string => (s.type === 'url' ? `url\u0004${s.url}` : `${s.type}\u0004${s.media_type}\u0004${part(s.data)}`);

/** A tool call's input: its string fields sampled (an agent's file writes carry whole files), the rest as JSON. */
function inputKey(input: unknown): string {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return part(JSON.stringify(input) ?? '');
  let k = '';
  for (const [name, v] of Object.entries(input)) k += `\u0006${name}\u0004${typeof v === 'string' ? `s${part(v)}` : `j${part(JSON.stringify(v) ?? '')}`}`;
  return k;
}

/** A block as hashed: texts and data sampled (no serialisation of large values), small values as JSON. */
function blockKey(b: Block): string {
  switch (b.type) {
    case 'text': return `t${part(b.text)}`;
    case 'image': return `i${sourceKey(b.source)}`;
    case 'document': return `d${sourceKey(b.source)}\u0004${b.title ?? ''}\u0004${part(b.context ?? '')}`;
    case 'redacted_thinking': return `x${part(b.data)}`;
    case 'tool_use': return `u${b.id}\u0004${b.name}\u0004${inputKey(b.input)}`;
    case 'tool_result': {
      let k = `r${b.tool_use_id}\u0004${b.is_error === true ? 1 : 0}`;
      for (const c of b.content) {
        k += c.type === 'text' ? `\u0005t${part(c.text)}` : c.type === 'image' ? `\u0005i${sourceKey(c.source)}`
          : c.type === 'document' ? `\u0005${blockKey(c)}` : `\u0005n${c.tool_name}`;
      }
      return k;
    }
    case 'thinking': return `k${part(b.thinking)}\u0004${part(b.signature)}`;
    case 'tool_addition': case 'tool_removal': return `c${b.type}\u0004${part(JSON.stringify(b.tool))}`;
  }
}

/**
 * One string hashed in one call (crypto.hash): cheaper than a Hash object fed block by block. The
 * separators are control characters and every part is prefixed by its length, so the string reads
 * back one way only (conversations differ in their keys unless they differ only inside long texts).
 */
function hashConversation(keyId: string | null, req: CanonicalRequest, messages: readonly Message[]): string {
  const k0 = keyId ?? '-';
  let s = `${k0.length}:${k0}`;
  for (const b of req.system) s += `\u0001${part(b.text)}`;
  for (const m of messages) {
    s += `\u0002${m.role}`;
    for (const b of m.content) { const k = blockKey(b); s += `\u0003${k.length}:${k}`; }
  }
  return hash('sha256', s, 'base64url');
}

/** Messages a follow-up shares with the request it follows: drop trailing user turns, then the assistant turn. */
function earlierTurns(messages: readonly Message[]): Message[] | null {
  let end = messages.length;
  while (end > 0 && messages[end - 1]!.role === 'user') end--;
  if (end === messages.length || end === 0) return null;
  while (end > 0 && messages[end - 1]!.role === 'assistant') end--;
  return end > 0 ? messages.slice(0, end) : null;
}

/** One remembered conversation as replicas exchange it: [key hash, model id, cached tokens, until (ms)]. */
export type SharedEntry = [string, string, number, number];

export class Affinity {
  readonly #map = new Map<string, Entry>();
  /** Told of every conversation this replica remembers (src/router/affinity-share.ts publishes them). */
  onRemember: ((e: SharedEntry) => void) | null = null;
  #ttl: number;
  #max: number;

  constructor(ttlMs: number, maxEntries: number) { this.#ttl = ttlMs; this.#max = maxEntries; }

  /**
   * New bounds (a reload): the map is cut to the new maximum at once, least recently used first, so
   * `max_entries: 0` forgets at once (nothing would be remembered again to cut it, and lookups would
   * keep following the old entries), and no entry outlives the new TTL from now.
   */
  configure(ttlMs: number, maxEntries: number, now = Date.now()): void {
    this.#ttl = ttlMs;
    this.#max = maxEntries;
    while (this.#map.size > Math.max(0, maxEntries)) this.#map.delete(this.#map.keys().next().value!);
    for (const e of this.#map.values()) if (e.until > now + ttlMs) e.until = now + ttlMs;
  }

  get size(): number { return this.#map.size; }

  /** The model holding this conversation's cache and the prompt tokens it holds, or null. */
  lookup(keyId: string | null, req: CanonicalRequest, now = Date.now()): { id: string; cachedTokens: number } | null {
    const earlier = earlierTurns(req.messages);
    if (!earlier) return null;
    const k = hashConversation(keyId, req, earlier);
    const e = this.#map.get(k);
    if (!e) return null;
    if (e.until < now) { this.#map.delete(k); return null; }
    return { id: e.id, cachedTokens: e.tokens };
  }

  /** Remembers who answered this conversation (called after a successful routed answer). */
  remember(keyId: string | null, req: CanonicalRequest, modelId: string, promptTokens: number, now = Date.now()): void {
    if (this.#max <= 0) return;
    const k = hashConversation(keyId, req, req.messages);
    this.#put(k, { id: modelId, tokens: promptTokens, until: now + this.#ttl });
    this.onRemember?.([k, modelId, promptTokens, now + this.#ttl]);
  }

  /** An entry another replica remembered (kept until its own expiry, within this replica's bounds). */
  apply(e: SharedEntry, now = Date.now()): void {
    const [k, id, tokens, until] = e;
    if (this.#max <= 0 || !(until > now)) return;
    this.#put(k, { id, tokens, until: Math.min(until, now + this.#ttl) });
  }

  #put(k: string, e: Entry): void {
    this.#map.delete(k);
    this.#map.set(k, e);
    while (this.#map.size > this.#max) this.#map.delete(this.#map.keys().next().value!);
  }
}
