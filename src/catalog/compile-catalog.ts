// Compiles every provider's models (generated file, refresh overlay, hand-written models, overrides)
// into the servable offers and the model index. Called once per config load by src/config/compile.ts.
import { canonicalKey, deriveAliases } from './aliases.ts';
import type { CanonicalModel, ModelIndex, Offer, RetiredModel } from './model-index.ts';
import { applyOverlay, type CatalogOverlay } from './overlay.ts';
import { applyOverrides, modelFromPartial, type ModelOverride } from './overrides.ts';
import { makerOf, makesOf } from './providers-map.ts';
import type { CatalogModel } from './types.ts';

export type ProviderModels<P> = {
  /** The compiled provider, carried into each entry. */
  provider: P;
  id: string;
  /** Models of the generated catalog file (providers/catalog/<id>.yaml). */
  catalog: readonly CatalogModel[];
  /** The provider file's own `models:` list. */
  handWritten: ReadonlyArray<Record<string, unknown>>;
  overrides: Readonly<Record<string, ModelOverride>>;
  /** `allow_unpriced: true`: unpriced models of this provider may be called (never routed). */
  allowUnpriced: boolean;
};

export type CompiledCatalog<P> = {
  /** Every callable offer by id (active, deprecated, hidden, unpriced); retired ones are in index.retired. */
  models: Map<string, Offer & { provider: P }>;
  /** Bare name (a model name at any provider, its last path segment, an alias or a canonical id) -> offer ids of every provider serving that model. */
  byName: Map<string, string[]>;
  index: ModelIndex;
  /** Overrides that named no model, and similar notes for `catalog check`. */
  notes: string[];
};

/** One provider's final model set: file, overlay, hand-written, then overrides (the operator wins). */
export function providerModels<P>(p: ProviderModels<P>, overlay: CatalogOverlay | null, notes: string[] = []): Map<string, CatalogModel> {
  const merged = new Map<string, CatalogModel>();
  for (const m of applyOverlay(p.id, p.catalog, overlay)) merged.set(m.name, m);
  for (const raw of p.handWritten) { const m = modelFromPartial(raw); m.hand_written = true; merged.set(m.name, m); }
  return applyOverrides(merged, p.overrides, notes);
}

const statusAt = (m: CatalogModel, now: number): Offer['status'] => {
  if (m.status === 'retired') return 'retired';
  if (m.retires_at !== undefined && Date.parse(m.retires_at) <= now) return 'retired';
  return m.status ?? 'active';
};

export function compileCatalog<P>(inputs: ReadonlyArray<ProviderModels<P>>, overlay: CatalogOverlay | null, now = Date.now()): CompiledCatalog<P> {
  const notes: string[] = [];
  const models = new Map<string, Offer & { provider: P }>();
  const aliases = new Map<string, string>();
  const retired = new Map<string, RetiredModel>();
  const bareAliases = new Map<string, string[]>();
  for (const p of inputs) {
    const own = providerModels(p, overlay, notes);
    const derived = deriveAliases(own);
    for (const name of derived.replaced) own.delete(name);
    for (const m of own.values()) {
      const id = `${p.id}/${m.name}`;
      const status = statusAt(m, now);
      const successor = m.successor ? (m.successor.includes('/') && !own.has(m.successor) ? m.successor : `${p.id}/${m.successor}`) : null;
      if (status === 'retired') {
        const r = { id, retiredAt: m.retires_at ?? null, successor };
        retired.set(id, r);
        for (const a of m.aliases ?? []) if (!own.has(a)) retired.set(`${p.id}/${a}`, r);
        continue;
      }
      const priced = m.unpriced !== true;
      const callable = priced || p.allowUnpriced;
      const hidden = m.hidden === true;
      models.set(id, {
        id, providerId: p.id, name: m.name, upstream: m.upstream ?? m.name, canonical: '', model: m, status,
        retiresAt: m.retires_at ?? null, successor, priced, callable,
        listed: !hidden, routable: status === 'active' && priced && callable && !hidden,
        provider: p.provider,
      });
    }
    for (const [alias, target] of derived.aliases) {
      const to = `${p.id}/${target}`;
      const from = `${p.id}/${alias}`;
      if (models.has(to)) {
        aliases.set(from, to);
        const list = bareAliases.get(to);
        if (list) list.push(alias); else bareAliases.set(to, [alias]);
      } else if (retired.has(to) && !retired.has(from)) retired.set(from, retired.get(to)!);
    }
  }
  const canonical = groupCanonical(models, bareAliases);
  return { models, byName: indexByName(models, canonical), index: { canonical, aliases, retired, notes }, notes };
}

/**
 * Canonical models: the maker's own offers define them (their name is the canonical id); every
 * other offer joins the one whose name or alias has its canonical key (date suffix dropped as a
 * second try), else forms a group under its own key.
 */
function groupCanonical<P>(models: Map<string, Offer & { provider: P }>, bareAliases: Map<string, string[]>): Map<string, CanonicalModel> {
  const byKey = new Map<string, string>();
  const groups = new Map<string, CanonicalModel>();
  const firstParty = (o: Offer): boolean => { const maker = makerOf(o.name); return maker !== undefined && makesOf(o.providerId).includes(maker); };
  const join = (o: Offer, id: string): void => {
    o.canonical = id;
    let g = groups.get(id);
    if (!g) { g = { id, offers: [], aliases: [] }; groups.set(id, g); }
    g.offers.push(o.id);
  };
  const offers = [...models.values()];
  for (const o of offers.filter(firstParty)) {
    const key = canonicalKey(o.name);
    const id = byKey.get(key) ?? o.name;
    byKey.set(key, id);
    for (const a of bareAliases.get(o.id) ?? []) if (!byKey.has(canonicalKey(a))) byKey.set(canonicalKey(a), id);
    join(o, id);
  }
  for (const o of offers) {
    if (o.canonical) continue;
    const key = canonicalKey(o.name);
    const undated = key.replace(/-(\d{8}|\d{4}-\d{2}-\d{2})$/, '');
    const id = byKey.get(key) ?? byKey.get(undated) ?? key;
    byKey.set(key, id);
    join(o, id);
  }
  for (const g of groups.values()) {
    const tier = (id: string): number => models.get(id)!.model.reliability_tier;
    g.offers.sort((a, b) => tier(a) - tier(b) || (a < b ? -1 : a > b ? 1 : 0));
    g.aliases = [...new Set(g.offers.flatMap((id) => bareAliases.get(id) ?? []))].sort();
  }
  return groups;
}

function indexByName<P>(models: Map<string, Offer & { provider: P }>, canonical: Map<string, CanonicalModel>): Map<string, string[]> {
  const byName = new Map<string, string[]>();
  const add = (name: string, ids: string[]): void => {
    const list = byName.get(name);
    if (!list) { byName.set(name, [...ids]); return; }
    for (const id of ids) if (!list.includes(id)) list.push(id);
  };
  for (const g of canonical.values()) {
    const names = new Set<string>([g.id, ...g.aliases]);
    for (const id of g.offers) {
      const name = models.get(id)!.name;
      names.add(name);
      names.add(name.slice(name.lastIndexOf('/') + 1));
    }
    for (const n of names) add(n, g.offers);
  }
  return byName;
}
