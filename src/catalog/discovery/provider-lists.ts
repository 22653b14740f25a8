// Each wire format's model-list endpoint, read with the operator's key and every page followed:
// OpenAI-compatible GET /models (cursor pages when offered), Anthropic GET /v1/models (after_id),
// Gemini models.list (pageToken), Bedrock ListFoundationModels and ListInferenceProfiles (nextToken).
import type { Provider } from '../../config/types.ts';
import type { ModelPatch } from '../overlay.ts';
import { DiscoveryError, getJson, providerGet } from './http.ts';

/** One model a provider lists, with what its list says about it (fields left out are unknown). */
export type ListedModel = { name: string; facts: Omit<ModelPatch, 'name'> };
export type ProviderList = { models: ListedModel[]; pages: number };
type Obj = Record<string, unknown>;

const MAX_PAGES = 50;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const int = (v: unknown): number | undefined => (typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? v : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const DECIMAL = /^(0|[1-9]\d*)(\.\d+)?$/;

/** An RFC 3339 time as the catalog's ISO form, or undefined (also for the epoch, which APIs use for "unknown"). */
export function isoTime(v: unknown): string | undefined {
  const s = typeof v === 'number' ? v * 1000 : typeof v === 'string' ? Date.parse(v) : NaN;
  if (!Number.isFinite(s) || s <= 86_400_000) return undefined;
  return new Date(s).toISOString().replace(/\.\d{3}Z$/, '+00:00');
}

function rows(body: unknown, key: string, where: string): Obj[] {
  const list = Array.isArray(body) ? body : isObj(body) ? body[key] : undefined;
  if (!Array.isArray(list)) throw new DiscoveryError('invalid', `${where}: the answer has no "${key}" list`);
  return list.filter(isObj);
}

/** Facts an OpenAI-compatible list may carry (OpenAI's own is id/created/owned_by; others add limits, lifecycle, OpenRouter-style prices). */
function openAIFacts(m: Obj): ListedModel['facts'] {
  const f: ListedModel['facts'] = {};
  const added = isoTime(m.created);
  if (added) f.added_at = added;
  const top = isObj(m.top_provider) ? m.top_provider : {};
  const context = int(m.context_length) ?? int(m.context_window) ?? int(m.max_context_length) ?? int(top.context_length);
  if (context) f.context_window = context;
  const output = int(m.max_completion_tokens) ?? int(m.max_output_tokens) ?? int(top.max_completion_tokens);
  if (output) f.max_completion_tokens = output;
  const name = str(m.name) ?? str(m.display_name);
  if (name) f.display_name = name;
  const shutdown = isoTime(m.shutdown_date) ?? isoTime(isObj(m.deprecation) ? m.deprecation.deprecation_date : undefined);
  if (shutdown) { f.retires_at = shutdown; f.status = 'deprecated'; }
  if (isObj(m.pricing) && typeof m.pricing.prompt === 'string' && DECIMAL.test(m.pricing.prompt)) f.pricing = openRouterPricing(m.pricing);
  return f;
}

/** OpenRouter's per-token decimal-string prices (the listing's own shape); fields not decimal strings are left out. */
export function openRouterPricing(p: Obj): NonNullable<ModelPatch['pricing']> {
  const out: NonNullable<ModelPatch['pricing']> = {};
  const map: Array<[string, keyof NonNullable<ModelPatch['pricing']>]> = [
    ['prompt', 'prompt'], ['completion', 'completion'], ['request', 'request'], ['image', 'image'], ['web_search', 'web_search'],
    ['internal_reasoning', 'internal_reasoning'], ['input_cache_read', 'input_cache_read'], ['input_cache_write', 'input_cache_write'], ['audio', 'input_audio'],
  ];
  for (const [from, to] of map) {
    const v = p[from];
    if (typeof v === 'string' && DECIMAL.test(v)) (out as Record<string, string>)[to] = v.replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, '');
  }
  return out;
}

type Page = { rows: Obj[]; next: string | undefined };

/** Follows a list's pages: `page(cursor)` answers one page's rows and the next cursor (none: the last page). */
async function paginate(page: (cursor: string | undefined) => Promise<Page>): Promise<{ rows: Obj[]; pages: number }> {
  const rows: Obj[] = [];
  let cursor: string | undefined;
  let pages = 0;
  while (pages < MAX_PAGES) {
    const r = await page(cursor);
    pages++;
    rows.push(...r.rows);
    if (!r.next || r.next === cursor) break;
    cursor = r.next;
  }
  return { rows, pages };
}

export type ListOptions = { timeoutMs: number; signal?: AbortSignal };
const fetchPage = (p: Provider, path: string, query: Record<string, string>, o: ListOptions): Promise<unknown> => {
  const { url, headers } = providerGet(p, path, query);
  return getJson(url, { headers, timeoutMs: o.timeoutMs, ...(o.signal ? { signal: o.signal } : {}) });
};

async function listOpenAI(p: Provider, o: ListOptions): Promise<ProviderList> {
  const { rows: items, pages } = await paginate(async (after) => {
    const body = await fetchPage(p, '/models', after ? { after } : {}, o);
    const page = rows(body, 'data', `${p.id} /models`);
    // Cursor pages where a provider offers them (OpenAI's own list answers in one page).
    const more = isObj(body) && body.has_more === true;
    return { rows: page, next: more ? str((body as Obj).last_id) ?? str(page[page.length - 1]?.id) : undefined };
  });
  return { models: items.filter((m) => str(m.id)).map((m) => ({ name: m.id as string, facts: openAIFacts(m) })), pages };
}

/** Facts of Anthropic's ModelInfo (the @anthropic-ai/sdk type): names, dates, limits, lifecycle, capabilities. */
function anthropicFacts(m: Obj): ListedModel['facts'] {
  const f: ListedModel['facts'] = {};
  if (str(m.display_name)) f.display_name = m.display_name as string;
  const added = isoTime(m.created_at);
  if (added) f.added_at = added;
  if (int(m.max_input_tokens)) f.context_window = m.max_input_tokens as number;
  if (int(m.max_tokens)) f.max_completion_tokens = m.max_tokens as number;
  if (m.lifecycle === 'deprecated' || m.lifecycle === 'retired') f.status = m.lifecycle;
  if (isoTime(m.deprecated_at)) f.deprecated_at = isoTime(m.deprecated_at)!;
  if (isoTime(m.retires_at)) f.retires_at = isoTime(m.retires_at)!;
  const caps = isObj(m.capabilities) ? m.capabilities : null;
  const on = (k: string): boolean | undefined => (caps && isObj(caps[k]) && typeof caps[k].supported === 'boolean' ? caps[k].supported as boolean : undefined);
  if (caps) {
    const c: NonNullable<ModelPatch['capabilities']> = {};
    if (on('image_input') !== undefined) c.vision = on('image_input')!;
    if (on('thinking') !== undefined) c.reasoning = on('thinking')!;
    if (Object.keys(c).length > 0) f.capabilities = c;
    if (on('image_input')) f.modalities = { input: ['text', 'image', ...(on('pdf_input') ? ['pdf'] : [])], output: ['text'] };
  }
  return f;
}

async function listAnthropic(p: Provider, o: ListOptions): Promise<ProviderList> {
  const { rows: items, pages } = await paginate(async (after) => {
    const body = await fetchPage(p, '/models', { limit: '1000', ...(after ? { after_id: after } : {}) }, o);
    return { rows: rows(body, 'data', `${p.id} /v1/models`), next: isObj(body) && body.has_more === true ? str(body.last_id) : undefined };
  });
  return { models: items.filter((m) => str(m.id)).map((m) => ({ name: m.id as string, facts: anthropicFacts(m) })), pages };
}

async function listGemini(p: Provider, o: ListOptions): Promise<ProviderList> {
  const { rows: items, pages } = await paginate(async (token) => {
    const body = await fetchPage(p, '/models', { pageSize: '1000', ...(token ? { pageToken: token } : {}) }, o);
    return { rows: rows(body, 'models', `${p.id} models.list`), next: isObj(body) ? str(body.nextPageToken) : undefined };
  });
  const models: ListedModel[] = [];
  for (const m of items) {
    const name = str(m.name)?.replace(/^models\//, '');
    // Only models the generateContent call (the gemini format) can use.
    if (!name || !Array.isArray(m.supportedGenerationMethods) || !m.supportedGenerationMethods.includes('generateContent')) continue;
    const f: ListedModel['facts'] = {};
    if (str(m.displayName)) f.display_name = m.displayName as string;
    if (int(m.inputTokenLimit)) f.context_window = m.inputTokenLimit as number;
    if (int(m.outputTokenLimit)) f.max_completion_tokens = m.outputTokenLimit as number;
    if (typeof m.thinking === 'boolean') f.capabilities = { reasoning: m.thinking };
    models.push({ name, facts: f });
  }
  return { models, pages };
}

/** Bedrock's control plane answers on bedrock.<region>, the runtime on bedrock-runtime.<region>. */
function bedrockControl(p: Provider): string {
  return p.baseUrl.replace('://bedrock-runtime.', '://bedrock.');
}

async function listBedrock(p: Provider, o: ListOptions): Promise<ProviderList> {
  const base = bedrockControl(p);
  const summaries = rows(await fetchPage(p, `${base}/foundation-models`, {}, o), 'modelSummaries', `${p.id} ListFoundationModels`);
  const byArnOrId = new Map<string, Obj>();
  const models: ListedModel[] = [];
  const factsOf = (m: Obj): ListedModel['facts'] => {
    const f: ListedModel['facts'] = {};
    if (str(m.modelName)) f.display_name = m.modelName as string;
    const mods = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string').map((x) => x.toLowerCase()) : []);
    const input = mods(m.inputModalities);
    const output = mods(m.outputModalities);
    if (input.length > 0 && output.length > 0) f.modalities = { input, output };
    if (isObj(m.modelLifecycle) && m.modelLifecycle.status === 'LEGACY') f.status = 'deprecated';
    return f;
  };
  for (const m of summaries) {
    const id = str(m.modelId);
    if (!id) continue;
    byArnOrId.set(id, m);
    if (str(m.modelArn)) byArnOrId.set(m.modelArn as string, m);
    const types = Array.isArray(m.inferenceTypesSupported) ? m.inferenceTypesSupported : [];
    // Only ids callable on demand; the others are reached through the inference profiles below.
    if (types.includes('ON_DEMAND')) models.push({ name: id, facts: factsOf(m) });
  }
  const profiles = await paginate(async (token) => {
    const body = await fetchPage(p, `${base}/inference-profiles`, { maxResults: '1000', type: 'SYSTEM_DEFINED', ...(token ? { nextToken: token } : {}) }, o);
    return { rows: rows(body, 'inferenceProfileSummaries', `${p.id} ListInferenceProfiles`), next: isObj(body) ? str(body.nextToken) : undefined };
  });
  for (const prof of profiles.rows) {
    const id = str(prof.inferenceProfileId);
    if (!id || (prof.status !== undefined && prof.status !== 'ACTIVE')) continue;
    const arn = Array.isArray(prof.models) && isObj(prof.models[0]) ? str(prof.models[0].modelArn) : undefined;
    const model = arn ? byArnOrId.get(arn) ?? byArnOrId.get(arn.replace(/^.*foundation-model\//, '')) : undefined;
    const f = model ? factsOf(model) : {};
    if (!f.display_name && str(prof.inferenceProfileName)) f.display_name = prof.inferenceProfileName as string;
    models.push({ name: id, facts: f });
  }
  return { models, pages: 1 + profiles.pages };
}

/** The lister of each wire format (a provider's format decides which endpoint lists its models). */
export const PROVIDER_LISTERS: Readonly<Record<string, (p: Provider, o: ListOptions) => Promise<ProviderList>>> = {
  'openai-chat': listOpenAI,
  'anthropic-messages': listAnthropic,
  gemini: listGemini,
  'bedrock-converse': listBedrock,
};
