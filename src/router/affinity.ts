// Conversation affinity: a follow-up whose earlier turns match a recent routed conversation
// prefers the model that served it (its prompt cache holds that prefix, so cache prices apply).
// Keyed by SHA-256 over the API key id, the system prompt and every message of the earlier request;
// a follow-up is looked up by its messages minus the trailing user turn(s) and the assistant answer
// before them. Bounded: at most maxEntries (least recently used go first), each for ttlMs. With Redis,
// replicas share what they remember (affinity-share.ts); lookups stay local.
import { hash } from 'node:crypto';
import type { Block, CanonicalRequest, Message } from '../formats/canonical.ts';

type Entry = { id: string; tokens: number; until: number };

/** A block as hashed: its text as is (the common case, no serialisation), anything else as JSON. */
const blockKey = (b: Block): string => (b.type === 'text' ? `t${b.text}` : `j${JSON.stringify(b)}`);

/**
 * One string hashed in one call (crypto.hash): cheaper than a Hash object fed block by block. The
 * separators are control characters, and every text is prefixed by its length, so no two
 * conversations give the same string.
 */
function hashConversation(keyId: string | null, req: CanonicalRequest, messages: readonly Message[]): string {
  const k0 = keyId ?? '-';
  let s = `${k0.length}:${k0}`;
  for (const b of req.system) s += `\u0001${b.text.length}:${b.text}`;
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

  configure(ttlMs: number, maxEntries: number): void { this.#ttl = ttlMs; this.#max = maxEntries; }

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
