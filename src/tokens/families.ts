// Which tokenizer counts a model's prompt: an exact BPE encoding for the OpenAI families, else a
// named estimate family. Decided from the model name once per name (cached): never per request.

/** Exact encodings we ship (gpt-tokenizer) and the estimate families (see estimate.ts). */
export type Encoding = 'o200k_base' | 'cl100k_base';
export type EstimateFamily = 'anthropic' | 'gemini' | 'generic';
export type TokenizerId = { kind: 'exact'; encoding: Encoding } | { kind: 'estimate'; family: EstimateFamily };

/**
 * Name patterns, tested in order on the bare model name (lower-cased, provider prefix and any
 * vendor path such as `openai/` or `us.` dropped). Sources: OpenAI's model pages and tiktoken's
 * model table (o200k_base from gpt-4o on, incl. o-series, gpt-4.1, gpt-4.5, gpt-5.x and gpt-oss;
 * cl100k_base for gpt-4 and gpt-3.5 turbo and the text-embedding-3 / ada-002 embeddings).
 */
const RULES: ReadonlyArray<readonly [RegExp, TokenizerId]> = [
  [/^(gpt-4o|chatgpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|gpt-oss|o1|o3|o4|codex-mini|computer-use|gpt-realtime|gpt-audio)/, { kind: 'exact', encoding: 'o200k_base' }],
  [/^(gpt-4|gpt-3\.5|text-embedding-3|text-embedding-ada-002)/, { kind: 'exact', encoding: 'cl100k_base' }],
  [/^(claude|anthropic\.claude)/, { kind: 'estimate', family: 'anthropic' }],
  [/^(gemini|gemma)/, { kind: 'estimate', family: 'gemini' }],
];

const GENERIC: TokenizerId = { kind: 'estimate', family: 'generic' };
const cache = new Map<string, TokenizerId>();
const MAX_CACHE = 10_000;

/** The bare name a rule is matched against: `azure/gpt-4o` -> `gpt-4o`, `bedrock/us.anthropic.claude-x` -> `anthropic.claude-x`. */
export function bareModelName(model: string): string {
  let m = model.toLowerCase();
  const slash = m.lastIndexOf('/');
  if (slash >= 0) m = m.slice(slash + 1);
  return m.replace(/^(us|eu|apac|global|jp|au)\./, '');
}

/** The tokenizer for a model id (`provider/name`, or a bare or upstream name). */
export function tokenizerFor(model: string): TokenizerId {
  let t = cache.get(model);
  if (t) return t;
  const bare = bareModelName(model);
  t = GENERIC;
  for (const [re, id] of RULES) if (re.test(bare)) { t = id; break; }
  if (cache.size >= MAX_CACHE) cache.clear();
  cache.set(model, t);
  return t;
}

/**
 * The name a catalog entry's prompt is counted by (its tokenizer and image rule): the upstream id, the
 * model that bills (a `rename` override keeps the provider's id there: `opus` serves `claude-opus-4-8`),
 * else the catalog id when no rule knows the upstream id (an Azure deployment name such as
 * `my-gpt4o-deployment` under the entry `gpt-4o`). The router and the budget reservation both count by it.
 */
export function countingName(upstream: string | undefined, id: string): string {
  return upstream && tokenizerFor(upstream) !== GENERIC ? upstream : id;
}

/** A stable string key of a tokenizer (to count once per tokenizer across many candidates). */
export const tokenizerKey = (t: TokenizerId): string => (t.kind === 'exact' ? t.encoding : `estimate:${t.family}`);
