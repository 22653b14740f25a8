// Merges live source data into one provider's models by the sync's rules: OpenRouter's own API prices
// and limits its routes; a provider's own list says which models exist (new ones join, priced by the
// sync's sources or unpriced; ones it no longer lists are withdrawn) and what it knows of them.
import { buildModel, exclusionReason } from './build.ts';
import { isoTime, openRouterPricing, type ListedModel } from './discovery/provider-lists.ts';
import { patchModel } from './overlay.ts';
import { modelFromPartial } from './overrides.ts';
import { mergePricing, sheetPricing } from './prices.ts';
import type { ProviderSource } from './providers-map.ts';
import { priceModelFor, type DevModel } from './sources.ts';
import { PRICE_FIELDS, zeroPricing, type CatalogModel, type Pricing } from './types.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const int = (v: unknown): number => (typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? v : 0);
const today = (): string => new Date().toISOString().slice(0, 10);

/** One OpenRouter `data` item as models.dev-shaped facts plus its own price sheet (null when it has no usable price). */
export function openRouterModel(item: Obj): { dev: DevModel; pricing: Pricing | null; expires?: string } | null {
  if (typeof item.id !== 'string' || item.id === '') return null;
  const arch = isObj(item.architecture) ? item.architecture : {};
  const mods = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string').map((x) => (x === 'file' ? 'pdf' : x)) : []);
  const params = Array.isArray(item.supported_parameters) ? item.supported_parameters : [];
  const top = isObj(item.top_provider) ? item.top_provider : {};
  const added = isoTime(item.created)?.slice(0, 10) ?? '';
  const dev: DevModel = {
    id: item.id, name: typeof item.name === 'string' ? item.name : item.id,
    reasoning: params.includes('reasoning') || params.includes('include_reasoning'), toolCall: params.includes('tools'),
    releaseDate: added, lastUpdated: added, input: mods(arch.input_modalities), output: mods(arch.output_modalities),
    context: int(item.context_length) || int(top.context_length), outputLimit: int(top.max_completion_tokens), cost: null,
  };
  const raw = isObj(item.pricing) ? openRouterPricing(item.pricing) : {};
  // OpenRouter marks variable prices (its auto router) with "-1": not a decimal, so no price at all.
  const pricing = raw.prompt !== undefined && raw.completion !== undefined ? { ...zeroPricing(), ...raw } as Pricing : null;
  const expires = isoTime(item.expiration_date);
  return { dev, pricing, ...(expires ? { expires } : {}) };
}

/**
 * OpenRouter's API over the openrouter provider's models: its prices replace the sheet (tiers and
 * schedule kept only when its base prices are the ones they belong to), its limits and expiry
 * dates apply, and routes the offline catalog lacks join.
 */
export function applyOpenRouter(src: ProviderSource, models: Map<string, CatalogModel>, items: readonly unknown[]): void {
  for (const item of items) {
    if (!isObj(item)) continue;
    const or = openRouterModel(item);
    if (!or || exclusionReason(or.dev) || (src.serves && !src.serves.test(or.dev.id))) continue;
    const current = models.get(or.dev.id);
    const lifecycle: Partial<CatalogModel> = or.expires ? { status: 'deprecated', retires_at: or.expires } : {};
    if (!current || !current.pricing) {
      const m = buildModel(src, or.dev, or.pricing, { fallbackDate: today() });
      models.set(m.name, { ...m, ...lifecycle });
      continue;
    }
    const next: CatalogModel = { ...current, ...lifecycle };
    if (or.pricing) {
      const same = or.pricing.prompt === current.pricing.prompt && or.pricing.completion === current.pricing.completion;
      next.pricing = same ? { ...or.pricing, ...(current.pricing.tiers ? { tiers: current.pricing.tiers } : {}), ...(current.pricing.schedule ? { schedule: current.pricing.schedule } : {}) } : or.pricing;
      if (next.pricing.prompt !== '0' || next.pricing.completion !== '0' || next.name.endsWith(':free')) delete next.unpriced;
    }
    if (or.dev.context > 0) next.context_window = or.dev.context;
    if (or.dev.outputLimit > 0 && or.dev.outputLimit < next.context_window) next.max_completion_tokens = or.dev.outputLimit;
    else if (next.max_completion_tokens >= next.context_window) next.max_completion_tokens = Math.min(8192, Math.floor(next.context_window / 2));
    models.set(next.name, next);
  }
}

/** A listed model's facts, as a DevModel for the sync's builder (live models.dev facts win where they exist). */
function listedDev(l: ListedModel, live: DevModel | undefined): DevModel {
  const f = l.facts;
  const day = (f.added_at ?? '').slice(0, 10);
  return {
    id: l.name, name: f.display_name ?? live?.name ?? l.name,
    reasoning: live?.reasoning ?? f.capabilities?.reasoning ?? false, toolCall: live?.toolCall ?? f.capabilities?.tools ?? false,
    releaseDate: live?.releaseDate || day, lastUpdated: live?.lastUpdated || day,
    input: live?.input ?? f.modalities?.input ?? ['text'], output: live?.output ?? f.modalities?.output ?? ['text'],
    context: f.context_window ?? live?.context ?? 0, outputLimit: f.max_completion_tokens ?? live?.outputLimit ?? 0, cost: live?.cost ?? null,
  };
}

/** The share of a provider's active models a list must name to be taken as the same namespace (and allowed to withdraw the rest). */
const SAME_NAMESPACE = 0.5;

/**
 * A provider's own list over its models. Returns the names withdrawn (listed no longer) for the report.
 * `src` is null for providers the sync does not know (hand-written ones): new models join unpriced.
 */
export function applyProviderList(src: ProviderSource | null, models: Map<string, CatalogModel>, listed: readonly ListedModel[], live: ReadonlyMap<string, DevModel>): string[] {
  const names = new Set(listed.map((l) => l.name));
  // Measured before the list adds its own models: does it name enough of ours to be the same namespace?
  const before = [...models.values()].filter((m) => (m.status ?? 'active') !== 'retired');
  const sameNamespace = before.length > 0 && before.filter((m) => names.has(m.name)).length / before.length >= SAME_NAMESPACE;
  for (const l of listed) {
    const current = models.get(l.name);
    const { status, deprecated_at, retires_at, capabilities: _c, modalities: _m, pricing: listPricing, ...facts } = l.facts;
    if (current?.pricing && current.status !== 'retired') {
      const next = patchModel(current, { name: l.name, ...facts, ...(listPricing ? { pricing: listPricing } : {}) });
      if (next.max_completion_tokens >= next.context_window) next.max_completion_tokens = current.max_completion_tokens < next.context_window ? current.max_completion_tokens : Math.min(8192, Math.floor(next.context_window / 2));
      if (status) next.status = status;
      if (deprecated_at) next.deprecated_at = deprecated_at;
      if (retires_at) next.retires_at = retires_at;
      models.set(l.name, next);
      continue;
    }
    // New to the catalog, or listed again after the sync took it as withdrawn: built like the sync builds.
    const dev = listedDev(l, live.get(l.name));
    if (exclusionReason(dev) || (src && ((src.serves && !src.serves.test(l.name)) || src.notThroughFormat?.pattern.test(l.name)))) continue;
    const sheet = src?.prices ? sheetPricing(priceModelFor(src.prices, l.name)) : null;
    const pricing = listPricing && PRICE_FIELDS.every((f) => listPricing[f] !== undefined) ? listPricing as Pricing : mergePricing(dev.cost, sheet);
    const m = src ? buildModel(src, dev, pricing, { fallbackDate: today() }) : patchModel(modelFromPartial({ name: l.name, unpriced: true }), { name: l.name, ...facts });
    models.set(l.name, {
      ...m, ...(current?.status === 'retired' || status ? { status: status ?? 'deprecated' } : {}),
      ...(deprecated_at ? { deprecated_at } : {}), ...(retires_at ? { retires_at } : {}),
    });
  }
  if (!sameNamespace) return [];
  const withdrawn: string[] = [];
  for (const m of before) {
    if (names.has(m.name)) continue;
    models.set(m.name, { ...m, status: 'retired' });
    withdrawn.push(m.name);
  }
  return withdrawn;
}
