// Curated facts of current models that no installed package describes (release dates, limits,
// capabilities, and prices where no package prices the model), each with the page it was read from
// and the day it was checked. Written as facts, not copied from any file; the sync layers them over
// every package (docs/catalog.md, "Curated facts"). model_overrides still win over them.
import type { ModelPrice } from '@pydantic/genai-prices';

export type ReleaseFact = {
  /** YYYY-MM-DD: the maker's release (general availability) date. */
  released?: string;
  context?: number;
  output?: number;
  input?: string[];
  tools?: boolean;
  reasoning?: boolean;
  /** Per-million prices in genai-prices' shape (tiers start above `start` input tokens); only for models no package prices right. */
  prices?: ModelPrice;
  /** Where the facts are published, and the day they were read. */
  ref: string;
  checked: string;
};

const CLAUDE_DOCS = 'https://platform.claude.com/docs/en/models';
const CLAUDE_PRICING = 'https://platform.claude.com/docs/en/about-claude/pricing';
const CHECKED = '2026-11-23';

/** Claude 5.x models: text and image in, tools, adaptive thinking, 1M context, 128K output (each model page). */
const claude5 = (released: string, page: string, prices?: ModelPrice): ReleaseFact => ({
  released, context: 1_000_000, output: 128_000, input: ['text', 'image', 'pdf'], tools: true, reasoning: true,
  ...(prices ? { prices } : {}), ref: `${CLAUDE_DOCS}/${page}/overview${prices ? ` and ${CLAUDE_PRICING}` : ''}`, checked: CHECKED,
});

/** Gateway provider id -> model name (as the provider's API spells it) -> facts. */
export const RELEASE_FACTS: Readonly<Record<string, Readonly<Record<string, ReleaseFact>>>> = {
  anthropic: {
    // "Released October 7, 2026"; $0.10/$0.50 (5m write $0.125, 1h write $0.20, cache hit $0.01) for
    // prompts up to 100,000 tokens, 5x all of them above (input + cache reads + writes counted).
    'claude-haiku-5-5': claude5('2026-10-07', 'haiku-5-5', {
      input_mtok: { base: 0.1, tiers: [{ start: 100_000, price: 0.5 }] }, output_mtok: { base: 0.5, tiers: [{ start: 100_000, price: 2.5 }] },
      cache_write_mtok: { base: 0.125, tiers: [{ start: 100_000, price: 0.625 }] }, cache_write_1h_mtok: { base: 0.2, tiers: [{ start: 100_000, price: 1 }] },
      cache_read_mtok: { base: 0.01, tiers: [{ start: 100_000, price: 0.05 }] }, web_searches_kcount: 10,
    }),
    // $2/$10, 5m write $2.50, 1h write $4; cache hits cut from $0.20 to $0.10 on 2026-10-07 (pricing page).
    // genai-prices has no row of its own: its claude-sonnet-5 pattern would bill it the old cache-read price.
    // Release date: the day hosts announced it (2026-09-29); Anthropic's page was not found in the search corpus.
    'claude-sonnet-5-5': claude5('2026-09-29', 'sonnet-5-5', {
      input_mtok: 2, output_mtok: 10, cache_write_mtok: 2.5, cache_write_1h_mtok: 4, cache_read_mtok: 0.1, web_searches_kcount: 10,
    }),
    // Released November 9, 2026 at $8/$40, cache hit $0.20, 5m/1h writes $10/$16.
    'claude-fable-5-2': claude5('2026-11-09', 'fable-5-2', {
      input_mtok: 8, output_mtok: 40, cache_write_mtok: 10, cache_write_1h_mtok: 16, cache_read_mtok: 0.2, web_searches_kcount: 10,
    }),
    'claude-fable-5-1': claude5('2026-09-01', 'fable-5-1'),
    'claude-opus-5': claude5('2026-07-24', 'opus-5'),
    'claude-sonnet-5': claude5('2026-06-30', 'sonnet-5'),
    'claude-fable-5': claude5('2026-06-09', 'fable-5'),
    // Release dates only (limits and prices come from llm-zoo and genai-prices).
    'claude-opus-4-8': { released: '2026-05-28', ref: `${CLAUDE_DOCS}/opus-4-8/overview ("Released May 28, 2026")`, checked: CHECKED },
    'claude-opus-4-6': { released: '2026-02-05', ref: `${CLAUDE_DOCS}/opus-4-6/overview ("Released February 5, 2026")`, checked: CHECKED },
    'claude-opus-4-5-20251101': { released: '2025-11-24', ref: `${CLAUDE_DOCS}/opus-4-5/overview ("Released November 24, 2025")`, checked: CHECKED },
  },
};

/**
 * Models a maker's SDK names that not every account can call: listing them would let the router pick a
 * model that answers 403. Operators with access add them with model_overrides (`add: true`).
 */
export const LIMITED_ACCESS: Readonly<Record<string, { pattern: RegExp; reason: string }>> = {
  anthropic: {
    pattern: /^claude-mythos-/,
    reason: `limited availability: offered by invitation for defensive security work (${CLAUDE_PRICING}); add it with model_overrides where the account has access`,
  },
};

/** The curated facts of one model at one provider, or null. */
export function releaseFact(provider: string, name: string): ReleaseFact | null {
  return RELEASE_FACTS[provider]?.[name] ?? null;
}
