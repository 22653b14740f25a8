// Curated facts the sources lack or get wrong, each with the public page it comes from: makers'
// retirements and deprecations (with successors), the makers' own aliases, and corrections of
// source errors. The sync applies them after merging the sources; model_overrides still win.
import type { ModelStatus } from './types.ts';

export type LifecycleFact = {
  status: Exclude<ModelStatus, 'active'>;
  deprecated_at?: string;
  retires_at?: string;
  /** A model name at the same provider. */
  successor?: string;
  ref: string;
};

const ANTHROPIC = 'https://docs.claude.com/en/docs/about-claude/model-deprecations (and the Claude platform release notes)';
const OPENAI = 'https://platform.openai.com/docs/deprecations';
const GOOGLE = 'https://ai.google.dev/gemini-api/docs/changelog';
const GOOGLE_DEPRECATIONS = 'https://ai.google.dev/gemini-api/docs/deprecations';

const retired = (retires_at: string | undefined, successor: string | undefined, ref: string, deprecated_at?: string): LifecycleFact => ({
  status: 'retired', ...(deprecated_at ? { deprecated_at } : {}), ...(retires_at ? { retires_at } : {}), ...(successor ? { successor } : {}), ref,
});

/** Gateway provider id -> model name -> lifecycle fact (names as the catalog spells them). */
export const LIFECYCLE: Readonly<Record<string, Readonly<Record<string, LifecycleFact>>>> = {
  anthropic: {
    'claude-v1': retired('2024-11-06', 'claude-haiku-4-5-20251001', ANTHROPIC, '2024-09-04'),
    'claude-2': retired('2025-07-21', 'claude-sonnet-4-6', ANTHROPIC, '2025-01-21'),
    'claude-3-sonnet-20240229': retired('2025-07-21', 'claude-sonnet-4-6', ANTHROPIC, '2025-01-21'),
    'claude-3-5-sonnet-20240620': retired('2025-10-22', 'claude-sonnet-4-6', ANTHROPIC, '2025-08-13'),
    'claude-3-5-sonnet-20241022': retired('2025-10-22', 'claude-sonnet-4-6', ANTHROPIC, '2025-08-13'),
    'claude-3-opus-20240229': retired('2026-01-05', 'claude-opus-4-8', ANTHROPIC, '2025-06-30'),
    'claude-3-7-sonnet-20250219': retired('2026-02-19', 'claude-sonnet-4-6', ANTHROPIC, '2025-10-28'),
    'claude-3-5-haiku-20241022': retired('2026-02-19', 'claude-haiku-4-5-20251001', ANTHROPIC, '2025-10-28'),
    'claude-3-haiku-20240307': retired('2026-04-20', 'claude-haiku-4-5-20251001', ANTHROPIC),
    'claude-sonnet-4-20250514': retired('2026-06-15', 'claude-sonnet-4-6', ANTHROPIC, '2026-04-14'),
    'claude-opus-4-20250514': retired('2026-06-15', 'claude-opus-4-8', ANTHROPIC, '2026-04-14'),
    'claude-opus-4-1-20250805': retired('2026-08-05', 'claude-opus-4-8', ANTHROPIC, '2026-06-05'),
    // @anthropic-ai/sdk 1.11.0 DEPRECATED_MODELS: end of life November 30th, 2026; Claude Sonnet 5.5 is the current Sonnet.
    'claude-sonnet-4-5-20250929': { status: 'deprecated', retires_at: '2026-11-30', successor: 'claude-sonnet-5-5', ref: `${ANTHROPIC}; @anthropic-ai/sdk DEPRECATED_MODELS` },
    // @anthropic-ai/sdk 1.13.0 ("mark Claude Opus 4.5 as deprecated (end-of-life January 22, 2027)"); Claude Opus 5.5 is the current Opus.
    'claude-opus-4-5-20251101': { status: 'deprecated', retires_at: '2027-01-22', successor: 'claude-opus-5-5', ref: `${ANTHROPIC}; @anthropic-ai/sdk DEPRECATED_MODELS` },
  },
  openai: {
    ...Object.fromEntries(['ada', 'babbage', 'curie', 'davinci', 'text-davinci-002', 'text-davinci-003'].map((n) => [n, retired('2024-01-04', 'gpt-5.4-mini', OPENAI)])),
    'gpt-3.5-0301': retired('2024-06-13', 'gpt-5.4-mini', OPENAI),
    'gpt-3.5-turbo-0613': retired('2024-09-13', 'gpt-5.4-mini', OPENAI),
    'gpt-3.5-turbo-16k': retired('2024-09-13', 'gpt-5.4-mini', OPENAI),
    'gpt-4-vision-preview': retired('2024-12-06', 'gpt-5.4', OPENAI),
    'gpt-4-32k': retired('2025-06-06', 'gpt-5.4', OPENAI),
    'gpt-4.5-preview': retired('2025-07-14', 'gpt-5.4', OPENAI, '2025-04-14'),
    'o1-preview': retired('2025-07-28', 'gpt-5.4', OPENAI, '2025-04-28'),
    'o1-mini': retired('2025-10-27', 'gpt-5.4-mini', OPENAI, '2025-04-28'),
    'codex-mini-latest': retired(undefined, 'gpt-5.4-mini', OPENAI),
    'chatgpt-4o-latest': retired('2026-02-17', 'gpt-chat-latest', OPENAI, '2025-11-18'),
    // Deprecations of 2026-04-22: shut down on 2026-07-23 or 2026-10-23, both before PRICES_AS_OF.
    ...Object.fromEntries(['o1', 'o1-pro', 'o3-mini', 'o4-mini', 'gpt-5-chat-latest', 'gpt-5.1-chat-latest', 'gpt-4o-search-preview'].map((n) => [n, retired(undefined, n === 'o1-pro' ? 'gpt-5.5-pro' : n.includes('mini') ? 'gpt-5.4-mini' : 'gpt-5.5', OPENAI, '2026-04-22')])),
    // The same announcement's rows these names had missed (the page's table, as mirrored by
    // spybara.com's history of developers.openai.com, 2026-04-22): shut down before PRICES_AS_OF, they
    // were listed active and routed to. gpt-4's substitute is not in the rows read.
    'gpt-4o-mini-search-preview': retired('2026-07-23', 'gpt-4.1-mini', OPENAI, '2026-04-22'),
    'gpt-3.5-turbo': retired('2026-10-23', 'gpt-4.1-mini', OPENAI, '2026-04-22'),
    'gpt-4': retired('2026-10-23', undefined, OPENAI, '2026-04-22'),
    // Announced 2026-05-08: shut down 2026-08-10, replaced by gpt-5.5.
    'gpt-5.2-chat-latest': retired('2026-08-10', 'gpt-5.5', OPENAI, '2026-05-08'),
    'gpt-5.3-chat-latest': retired('2026-08-10', 'gpt-5.5', OPENAI, '2026-05-08'),
    // Announced 2026-06-11: shut down on 2026-12-11 (gpt-5 -> gpt-6.1-sol, gpt-5-mini -> gpt-6.1-terra;
    // the other rows' replacements were not in the excerpt read).
    ...Object.fromEntries(([['gpt-5', 'gpt-6.1-sol'], ['gpt-5-mini', 'gpt-6.1-terra'], ['gpt-5-nano', undefined], ['o3', undefined]] as const)
      .map(([n, next]) => [n, { status: 'deprecated', deprecated_at: '2026-06-11', retires_at: '2026-12-11', ...(next ? { successor: next } : {}), ref: OPENAI } satisfies LifecycleFact])),
  },
  // DeepSeek's API docs (api-docs.deepseek.com, "Your First API Call" and the 2026-04-24 V4 release
  // note): deepseek-chat and deepseek-reasoner became inaccessible after 2026-07-24 15:59 UTC; the
  // model to name is deepseek-flash (deepseek-v4-pro is routed to V4.1 Flash since 2026-09-14).
  deepseek: {
    'deepseek-chat': retired('2026-07-24', 'deepseek-flash', 'https://api-docs.deepseek.com/news/news260424'),
    'deepseek-reasoner': retired('2026-07-24', 'deepseek-flash', 'https://api-docs.deepseek.com/news/news260424'),
  },
  google: {
    'gemini-1.0-pro-vision-001': retired('2025-04-09', 'gemini-3.5-flash', GOOGLE),
    'gemini-pro': retired('2025-04-09', 'gemini-3.5-flash', GOOGLE),
    ...Object.fromEntries(['gemini-1.5-flash', 'gemini-1.5-flash-8b', 'gemini-1.5-pro', 'gemini-flash-1.5', 'gemini-flash-1.5-8b', 'gemini-pro-1.5'].map((n) => [n, retired('2025-09-24', 'gemini-3.5-flash', GOOGLE)])),
    'gemini-2.0-flash': retired('2026-06-01', 'gemini-3.5-flash', GOOGLE, '2026-02-18'),
    'gemini-2.0-flash-lite': retired('2026-06-01', 'gemini-3.1-flash-lite', GOOGLE, '2026-02-18'),
    'gemini-3.1-flash-lite-preview': retired('2026-05-25', 'gemini-3.1-flash-lite', GOOGLE),
    // Google's deprecations page (ai.google.dev/gemini-api/docs/deprecations): the 2.5 Pro previews shut
    // down 2025-12-02 and Gemini 3 Pro Preview 2026-03-09 (its replacement Gemini 3.1 Pro Preview; both
    // were listed, the previews active). Gemini 2.5 Pro and Flash have 2026-06-17 as their earliest
    // shutdown date ("the earliest possible dates"): deprecated, not routed, their date not claimed.
    'gemini-2.5-pro-preview-05-06': retired('2025-12-02', 'gemini-3.1-pro-preview', GOOGLE_DEPRECATIONS),
    'gemini-2.5-pro-preview-06-05': retired('2025-12-02', 'gemini-3.1-pro-preview', GOOGLE_DEPRECATIONS),
    'gemini-3-pro-preview': retired('2026-03-09', 'gemini-3.1-pro-preview', GOOGLE_DEPRECATIONS),
    'gemini-2.5-pro': { status: 'deprecated', successor: 'gemini-3.1-pro-preview', ref: GOOGLE_DEPRECATIONS },
    'gemini-2.5-flash': { status: 'deprecated', ref: GOOGLE_DEPRECATIONS },
  },
};

/**
 * The makers' own aliases: an undated name served as the newest dated snapshot (Anthropic's
 * "Claude API alias" column in https://docs.claude.com/en/docs/about-claude/models/overview).
 * The sync drops a source's separate record of the alias and lists it on the target instead.
 */
export const MAKER_ALIASES: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  anthropic: {
    'claude-sonnet-4-5': 'claude-sonnet-4-5-20250929',
    'claude-haiku-4-5': 'claude-haiku-4-5-20251001',
    'claude-opus-4-5': 'claude-opus-4-5-20251101',
    'claude-opus-4-1': 'claude-opus-4-1-20250805',
    'claude-opus-4-0': 'claude-opus-4-20250514',
    'claude-sonnet-4-0': 'claude-sonnet-4-20250514',
    'claude-3-7-sonnet-latest': 'claude-3-7-sonnet-20250219',
    'claude-3-5-haiku-latest': 'claude-3-5-haiku-20241022',
    'claude-3-5-sonnet-latest': 'claude-3-5-sonnet-20241022',
    'claude-3-opus-latest': 'claude-3-opus-20240229',
  },
};

/** Fields a correction may set: facts the sources state wrongly. */
export type Correction = { added_at?: string; max_completion_tokens?: number; context_window?: number; ref: string };

/**
 * Corrections by canonical model name (they apply at every provider serving it). Each names where
 * the right value is published.
 */
export const CORRECTIONS: Readonly<Record<string, Correction>> = {
  // models.dev dates it 2024-06-26, a year before the o3 family existed.
  'o3-deep-research': { added_at: '2025-06-26', ref: 'https://platform.openai.com/docs/models/o3-deep-research (released 2025-06-26)' },
  'o4-mini-deep-research': { added_at: '2025-06-26', ref: 'https://platform.openai.com/docs/models/o4-mini-deep-research (released 2025-06-26)' },
  // models.dev (azure) dates Grok 4.1 Fast before Grok 4 existed.
  'grok-4-1-fast-reasoning': { added_at: '2025-11-19', ref: 'https://docs.x.ai/docs/release-notes (Grok 4.1 Fast, November 2025)' },
  'grok-4-1-fast-non-reasoning': { added_at: '2025-11-19', ref: 'https://docs.x.ai/docs/release-notes (Grok 4.1 Fast, November 2025)' },
  // models.dev gives the context window as the output limit.
  'deepseek-reasoner': { max_completion_tokens: 64000, ref: 'https://api-docs.deepseek.com/quick_start/pricing (max output 64K)' },
  'deepseek-chat': { max_completion_tokens: 8192, ref: 'https://api-docs.deepseek.com/quick_start/pricing (max output 8K)' },
};

/**
 * The earliest date a model of each family can have: its maker's first release of the family. A
 * record dated more than a month before it is a source error (the invariant test checks every model).
 */
export const FAMILY_SINCE: ReadonlyArray<[RegExp, string]> = [
  [/(^|[/.])o3(-|$)/, '2024-12-20'], [/(^|[/.])o4-/, '2025-04-16'], [/(^|[/.])gpt-5/, '2025-08-07'], [/(^|[/.])gpt-4\.1/, '2025-04-14'],
  [/(^|[/.])gpt-4o/, '2024-05-13'], [/claude-(sonnet|opus|haiku)-4/, '2025-05-22'], [/claude-(sonnet|opus)-5/, '2026-01-01'],
  [/gemini-2\.5/, '2025-03-25'], [/gemini-3/, '2025-11-18'], [/grok-4/, '2025-07-09'], [/deepseek-v4/, '2026-01-01'],
];
