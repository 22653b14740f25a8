// Model facts from installed npm packages beside the two pinned catalogs: OpenAI's model specs in
// gpt-tokenizer, the llm-zoo registry, and the model names and deprecations the official SDKs declare.
// Read once at the edge of the sync; provider-build.ts layers them over the 2025-09 models.dev data.
import { readFileSync } from 'node:fs';
import * as openaiSpecs from 'gpt-tokenizer/models';
import { MODEL_CONFIGS } from 'llm-zoo';

export const OPENAI_SPECS_PACKAGE = 'gpt-tokenizer';
export const ZOO_PACKAGE = 'llm-zoo';
export const ANTHROPIC_SDK = '@anthropic-ai/sdk';
export const OPENAI_SDK = 'openai';

/** Facts one package gives about one model; absent fields are unknown to it. */
export type PackageFact = {
  context?: number;
  output?: number;
  input?: string[];
  tools?: boolean;
  reasoning?: boolean;
  /** YYYY-MM-DD: the date in the maker's dated snapshot id the undated name points to. */
  releaseDate?: string;
  /** The package says the maker no longer recommends it (no retirement date). */
  deprecated?: boolean;
  /** False when the maker serves it only through another API (OpenAI's Responses API). */
  chatCompletions?: boolean;
  from: string;
};

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
const DATED = /-(\d{4})-(\d{2})-(\d{2})$/;

function nodeModule(path: string): string {
  return readFileSync(new URL(`../../node_modules/${path}`, import.meta.url), 'utf8');
}

/** The string literals of one `export type Name = 'a' | 'b' | ...;` declaration; throws when the shape changed. */
export function unionMembers(source: string, typeName: string, where: string): string[] {
  const m = new RegExp(`export type ${typeName} = ([^;]+);`).exec(source);
  if (!m) throw new Error(`${where}: no "export type ${typeName}" union (the package changed shape; update src/catalog/package-facts.ts)`);
  return [...m[1]!.matchAll(/'([^']+)'/g)].map((x) => x[1]!);
}

type SpecLike = {
  name?: string; context_window?: number; max_output_tokens?: number; modalities?: { input?: string[] };
  supported_endpoints?: string[]; supported_features?: string[]; reasoning_tokens?: boolean; deprecated?: boolean;
};

/** OpenAI's model specs as gpt-tokenizer ships them (from OpenAI's model pages), keyed by the name used to call them. */
function openaiFacts(): Map<string, PackageFact> {
  const out = new Map<string, PackageFact>();
  for (const [key, raw] of Object.entries(openaiSpecs as Record<string, unknown>)) {
    if (typeof raw !== 'object' || raw === null || typeof (raw as SpecLike).name !== 'string') continue;
    const s = raw as SpecLike;
    const dated = DATED.exec(s.name!);
    const endpoints = s.supported_endpoints ?? [];
    out.set(key, {
      ...(s.context_window ? { context: s.context_window } : {}),
      ...(s.max_output_tokens ? { output: s.max_output_tokens } : {}),
      ...(s.modalities?.input ? { input: [...s.modalities.input] } : {}),
      tools: (s.supported_features ?? []).includes('function_calling'),
      reasoning: s.reasoning_tokens === true,
      ...(dated && s.name!.startsWith(`${key}-`) ? { releaseDate: `${dated[1]}-${dated[2]}-${dated[3]}` } : {}),
      ...(s.deprecated ? { deprecated: true } : {}),
      ...(endpoints.length > 0 ? { chatCompletions: endpoints.includes('chat_completions') } : {}),
      from: OPENAI_SPECS_PACKAGE,
    });
  }
  return out;
}

/** llm-zoo provider id -> gateway provider id (its makers' own APIs only). */
const ZOO_PROVIDERS: Readonly<Record<string, string>> = { anthropic: 'anthropic', openai: 'openai', google: 'google', xai: 'xai', deepseek: 'deepseek' };

/**
 * llm-zoo's registry by gateway provider and API id. Its rows of one id (thinking on/off, fast tier, pro
 * mode, older figures) are folded into one fact: the first standard row's limits, any row's tools and reasoning. Its
 * `deprecated` flag means "superseded" there (it marks every model but the newest), so only
 * `retired` is read, and the sync treats that as deprecated (this package is not the maker). Its
 * `requiresResponsesAPI` is not read: OpenAI's own SDK and specs say which API serves a model.
 */
function zooFacts(): Map<string, Map<string, PackageFact>> {
  const out = new Map<string, Map<string, PackageFact>>();
  const variantIds = new Set<string>();
  for (const c of Object.values(MODEL_CONFIGS)) {
    const provider = ZOO_PROVIDERS[c.provider];
    if (!provider || c.openRouterOnly) continue;
    const byId = out.get(provider) ?? new Map<string, PackageFact>();
    out.set(provider, byId);
    const variant = c.serviceTier !== undefined || c.capabilities.reasoningMode !== undefined;
    const prev = byId.get(c.fullName);
    const caps = c.capabilities;
    const fact: PackageFact = {
      context: c.contextWindow, output: c.maxOutputTokens,
      input: ['text', ...(caps.supportsVision ? ['image'] : []), ...(caps.supportsNativeAudio ? ['audio'] : []), ...(caps.supportsNativePdf ? ['pdf'] : [])],
      tools: caps.supportsFunctionCalling, reasoning: caps.supportsReasoning,
      ...(c.retired ? { deprecated: true } : {}),
      from: ZOO_PACKAGE,
    };
    // The registry lists a model's current row first; later rows of the same id are variants or older figures.
    const keep = !prev || (variantIds.has(c.fullName) && !variant) ? fact : prev;
    if (!prev || !variant) variantIds.delete(c.fullName);
    if (!prev && variant) variantIds.add(c.fullName);
    byId.set(c.fullName, { ...keep, reasoning: prev?.reasoning === true || fact.reasoning === true, tools: prev?.tools === true || fact.tools === true });
  }
  return out;
}

export type SdkModels = {
  /** Model names the maker's SDK declares for its chat API, newest first as the SDK orders them. */
  names: string[];
  /** Names the SDK declares only for another API (OpenAI's Responses-only models). */
  otherApiOnly: Set<string>;
  /** Name -> end-of-life date (YYYY-MM-DD) from the SDK's deprecation table. */
  endOfLife: Map<string, string>;
};

/** "November 30th, 2026" -> "2026-11-30". */
function sdkDate(text: string): string | null {
  const m = /^([A-Za-z]+) (\d{1,2})(?:st|nd|rd|th)?, (\d{4})$/.exec(text.trim());
  const month = m ? MONTHS.indexOf(m[1]!.toLowerCase()) + 1 : 0;
  return m && month > 0 ? `${m[3]}-${String(month).padStart(2, '0')}-${m[2]!.padStart(2, '0')}` : null;
}

/** Anthropic's SDK: the `Model` union and the `DEPRECATED_MODELS` table its client warns from. */
function anthropicSdk(): SdkModels {
  const names = unionMembers(nodeModule('@anthropic-ai/sdk/resources/messages/messages.d.ts'), 'Model', ANTHROPIC_SDK);
  // Since 1.13 the table is generated data of its own (internal/data/deprecated-models.js).
  const js = nodeModule('@anthropic-ai/sdk/internal/data/deprecated-models.js');
  const table = /DEPRECATED_MODELS = \{([^}]*)\}/.exec(js);
  if (!table) throw new Error(`${ANTHROPIC_SDK}: no DEPRECATED_MODELS table (update src/catalog/package-facts.ts)`);
  const endOfLife = new Map<string, string>();
  for (const [, name, when] of table[1]!.matchAll(/'([^']+)':\s*'([^']+)'/g)) {
    const day = sdkDate(when!);
    if (day) endOfLife.set(name!, day);
  }
  return { names, otherApiOnly: new Set(), endOfLife };
}

/** OpenAI's SDK: `ChatModel` (chat completions) and `ResponsesModel` (adds the Responses-only models). */
function openaiSdk(): SdkModels {
  const shared = nodeModule('openai/resources/shared.d.ts');
  const names = unionMembers(shared, 'ChatModel', OPENAI_SDK);
  const chat = new Set(names);
  const otherApiOnly = new Set(unionMembers(shared, 'ResponsesModel', OPENAI_SDK).filter((n) => !chat.has(n)));
  return { names, otherApiOnly, endOfLife: new Map() };
}

let cache: { openai: Map<string, PackageFact>; zoo: Map<string, Map<string, PackageFact>>; sdk: Map<string, SdkModels> } | null = null;
function load(): NonNullable<typeof cache> {
  cache ??= { openai: openaiFacts(), zoo: zooFacts(), sdk: new Map([['anthropic', anthropicSdk()], ['openai', openaiSdk()]]) };
  return cache;
}

/**
 * The package facts for one gateway provider's models, in the order they are layered (later wins):
 * llm-zoo, then OpenAI's own specs. Only makers' own APIs have any.
 */
export function packageFactLayers(provider: string): Array<Map<string, PackageFact>> {
  const l = load();
  const zoo = l.zoo.get(provider);
  return [...(zoo ? [zoo] : []), ...(provider === 'openai' ? [l.openai] : [])];
}

/** What the maker's official SDK declares for a gateway provider, or null when it has no SDK we read. */
export function sdkModels(provider: string): SdkModels | null {
  return load().sdk.get(provider) ?? null;
}

/** The packages behind packageFactLayers and sdkModels for a provider (for the files' provenance header). */
export function factPackagesOf(provider: string): string[] {
  return [
    ...(load().zoo.has(provider) ? [ZOO_PACKAGE] : []),
    ...(provider === 'openai' ? [OPENAI_SPECS_PACKAGE, OPENAI_SDK] : []),
    ...(provider === 'anthropic' ? [ANTHROPIC_SDK] : []),
  ];
}
