// The exact BPE encodings (gpt-tokenizer), loaded off the request path: loading o200k_base takes
// about 200 ms, so the first call starts an asynchronous import and counts by estimate until it lands.
// Counts are cached per encoding: texts of 64+ characters bounded by total characters (a
// conversation resends every earlier turn and a system prompt repeats, so only new text is encoded),
// shorter ones bounded by count (short system prompts and greetings repeat too, and encoding even a
// 25-character text costs 5-15 us in the gateway: gpt-tokenizer's per-call set-up).
import type { Encoding } from './families.ts';
import { countInSlices } from './slices.ts';
import { TextCache } from '../util/text-cache.ts';

type CountFn = (text: string) => number;

/**
 * An encoding ready to count: `cached` answers -1 when the text was not counted before; `countSliced`
 * counts a long text a slice at a time (src/tokens/slices.ts), awaiting `pause` between slices, and
 * remembers it as `count` does.
 */
export type ExactCounter = { count: CountFn; cached: CountFn; countSliced(text: string, sliceChars: number, pause: () => Promise<void>): Promise<number> };

const CACHE_MIN_CHARS = 64;
const CACHE_MAX_CHARS = 8_000_000;
/** Short texts remembered per encoding; past it the short cache starts over (a unique prompt costs one lookup more). */
const SHORT_MAX = 16_384;
/** countTokens on a plain string: special-token text such as "<|endoftext|>" is counted as the ordinary text it is to the API. */
const NO_SPECIAL = { disallowedSpecial: new Set<string>() };

const loaded = new Map<Encoding, ExactCounter>();
const loading = new Map<Encoding, Promise<ExactCounter>>();

function counter(raw: CountFn): ExactCounter {
  const map = new TextCache<number>(CACHE_MAX_CHARS);
  const short = new Map<string, number>();
  const cached = (s: string): number => (s.length === 0 ? 0 : (s.length < CACHE_MIN_CHARS ? short.get(s) : map.get(s)) ?? -1);
  const remember = (s: string, n: number): number => {
    if (s.length < CACHE_MIN_CHARS) {
      if (short.size >= SHORT_MAX) short.clear();
      short.set(s, n);
    } else map.set(s, n);
    return n;
  };
  return {
    cached,
    count: (s) => { const hit = cached(s); return hit >= 0 ? hit : remember(s, raw(s)); },
    countSliced: async (s, size, pause) => { const hit = cached(s); return hit >= 0 ? hit : remember(s, await countInSlices(s, size, raw, pause)); },
  };
}

async function importEncoding(e: Encoding): Promise<ExactCounter> {
  // Specifiers are literal so bundlers and `npm ls` see the dependency.
  const mod = e === 'o200k_base'
    ? await import('gpt-tokenizer/encoding/o200k_base')
    : await import('gpt-tokenizer/encoding/cl100k_base');
  const c = counter((text) => mod.countTokens(text, NO_SPECIAL));
  loaded.set(e, c);
  return c;
}

/** Starts loading an encoding (idempotent); resolves when it can count. */
export function loadEncoding(e: Encoding): Promise<ExactCounter> {
  let p = loading.get(e);
  if (!p) {
    p = importEncoding(e);
    // A failed import (broken install) leaves the estimate in charge; it is retried on the next call.
    p.catch(() => loading.delete(e));
    loading.set(e, p);
  }
  return p;
}

/** The encoding's counter when it is loaded, else null (and loading starts). */
export function exactCounter(e: Encoding): ExactCounter | null {
  const f = loaded.get(e);
  if (f) return f;
  void loadEncoding(e).catch(() => {});
  return null;
}

/**
 * Loads every exact encoding: the router's start calls it before the server listens (loading blocks
 * the event loop 0.4-0.6 s for the two, so it must not happen on first use while serving), and tests.
 * Without it each encoding loads on first use (exactCounter) and counts are estimates meanwhile.
 */
export async function warmTokenizers(): Promise<void> {
  await Promise.all([loadEncoding('o200k_base'), loadEncoding('cl100k_base')]);
}
