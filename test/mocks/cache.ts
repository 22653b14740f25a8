// Simulated prompt caches: automatic prefix caching (OpenAI, Gemini) and explicit breakpoint
// caching (Anthropic cache_control, Bedrock cachePoint). Token counts follow text.ts estimates.
import { createHash } from 'node:crypto';
import { estimateTokens } from './text.ts';

const hash = (s: string): string => createHash('sha256').update(s).digest('hex');

/**
 * Automatic caching of a prompt's leading text: prompts of at least `minTokens` tokens store
 * prefixes at `minTokens`, then every `step` tokens; a later prompt sharing one of those
 * prefixes reports the longest as cached tokens (so 1024, 1152, 1280... with step 128).
 */
export class PrefixCache {
  #seen = new Set<string>();
  readonly minTokens: number;
  readonly step: number;

  constructor(minTokens = 1024, step = 128) {
    this.minTokens = minTokens;
    this.step = step;
  }

  /** Returns the cached token count for this prompt text, then remembers its prefixes. */
  lookupAndStore(scope: string, promptText: string): number {
    const total = estimateTokens(promptText);
    if (total < this.minTokens) return 0;
    let cached = 0;
    for (let b = this.minTokens; b <= total; b += this.step) {
      const key = hash(`${scope}\u0000${promptText.slice(0, b * 4)}`);
      if (this.#seen.has(key)) cached = b;
      else this.#seen.add(key);
    }
    return cached;
  }

  clear(): void {
    this.#seen.clear();
  }
}

/** One cache breakpoint: the canonical text of everything up to and including its block. */
export interface Breakpoint {
  prefix: string;
  ttl: '5m' | '1h';
}

export interface BreakpointUsage {
  /** Tokens read from the cache (the longest prefix seen before). */
  read: number;
  /** Tokens written: from the read point to the last eligible breakpoint. */
  written: number;
  /** The written tokens by time-to-live (the last breakpoint's ttl). */
  written5m: number;
  written1h: number;
}

/**
 * Explicit caching: a breakpoint whose prefix reaches `minTokens` is eligible; the longest
 * eligible prefix already stored is read, and the last eligible one is written if new.
 */
export class BreakpointCache {
  #seen = new Set<string>();

  apply(scope: string, breakpoints: readonly Breakpoint[], minTokens: number): BreakpointUsage {
    const eligible = breakpoints
      .map((b) => ({ key: hash(`${scope}\u0000${b.prefix}`), tokens: estimateTokens(b.prefix), ttl: b.ttl }))
      .filter((b) => b.tokens >= minTokens);
    const usage: BreakpointUsage = { read: 0, written: 0, written5m: 0, written1h: 0 };
    if (eligible.length === 0) return usage;
    for (const b of eligible) if (this.#seen.has(b.key)) usage.read = Math.max(usage.read, b.tokens);
    const last = eligible.reduce((a, b) => (b.tokens >= a.tokens ? b : a));
    if (!this.#seen.has(last.key)) {
      usage.written = last.tokens - usage.read;
      if (last.ttl === '1h') usage.written1h = usage.written;
      else usage.written5m = usage.written;
    }
    for (const b of eligible) this.#seen.add(b.key);
    return usage;
  }

  clear(): void {
    this.#seen.clear();
  }
}
