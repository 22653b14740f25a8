// Builds one provider's generated catalog: the union of its sources (the pinned models.dev data with
// newer package and curated facts layered over it, the models the maker's SDK names, then models only
// genai-prices prices), chat models only, with lifecycle, aliases and corrections applied.
import { canonicalKey, datedName } from './aliases.ts';
import { buildModel, exclusionReason } from './build.ts';
import { curatedModels } from './curated.ts';
import { CORRECTIONS, LIFECYCLE, MAKER_ALIASES } from './lifecycle.ts';
import { packageFactLayers, sdkModels, ZOO_PACKAGE, type PackageFact } from './package-facts.ts';
import { mergePricing, sheetFrom, sheetPricing } from './prices.ts';
import { makerOf, REJECTED_PRICE_MATCHES, type ProviderSource } from './providers-map.ts';
import { LIMITED_ACCESS, RELEASE_FACTS, releaseFact, type ReleaseFact } from './release-facts.ts';
import { callableName, devModels, matchesName, priceModelFor, pricedModels, PRICES_AS_OF, type DevModel } from './sources.ts';
import type { CatalogModel } from './types.ts';

export type Excluded = { name: string; reason: string };
/** `borrowed`: the models whose facts no source states (borrowed from their family: borrowedFacts). */
export type ProviderModelsBuild = { models: CatalogModel[]; excluded: Excluded[]; usedPrices: boolean; usedPackage: boolean; usedLive: boolean; borrowed: ReadonlySet<string> };

/**
 * The makers' own active models by canonical key (src/catalog/aliases.ts canonicalKey), for hosts'
 * entries: which ones a maker serves now ('maker-active'), and the maker's record where a source
 * states its facts (null where they are borrowed too).
 */
export type MakerActive = ReadonlyMap<string, CatalogModel | null>;

/** Where a model's facts came from: the live models.dev API (refresh), the pinned 2025-09 package, newer packages or the curated tables. */
type FactFrom = 'live' | 'package' | 'newer' | 'curated';
type Fact = DevModel & { from: FactFrom; deprecatedBy?: string; otherApiOnly?: boolean; borrowed?: boolean };

/** One package's or the curated table's facts over a model's (only the fields it states). */
function layer(m: Fact, f: PackageFact | ReleaseFact, from: FactFrom): Fact {
  const released = 'released' in f ? f.released : (f as PackageFact).releaseDate;
  return {
    ...m,
    ...(f.context ? { context: f.context } : {}),
    ...(f.output ? { outputLimit: f.output } : {}),
    ...(f.input ? { input: f.input } : {}),
    ...(f.tools !== undefined ? { toolCall: f.tools } : {}),
    ...(f.reasoning !== undefined ? { reasoning: f.reasoning } : {}),
    ...(released ? { releaseDate: released, lastUpdated: m.lastUpdated > released ? m.lastUpdated : released } : {}),
    ...('deprecated' in f && f.deprecated ? { deprecatedBy: (f as PackageFact).from } : {}),
    ...('chatCompletions' in f && f.chatCompletions === false ? { otherApiOnly: true } : {}),
    from: m.from === 'live' || m.from === 'curated' ? m.from : from,
  };
}

/** The release date a dated id states ("claude-opus-4-5-20251101"), as the facts' dates; none when undated. */
function nameDate(name: string): { releaseDate: string; lastUpdated: string } | Record<string, never> {
  const d = datedName(name);
  if (!d || d[1].length !== 8 || d[1].endsWith('00')) return {};
  const day = `${d[1].slice(0, 4)}-${d[1].slice(4, 6)}-${d[1].slice(6)}`;
  return { releaseDate: day, lastUpdated: day };
}

const blank = (id: string): Fact => ({
  id, name: id, reasoning: false, toolCall: false, releaseDate: '', lastUpdated: '', input: ['text'], output: ['text'], context: 0, outputLimit: 0, cost: null, from: 'newer',
});

/**
 * The provider's facts, layered (later wins field by field): the pinned models.dev package (2025-09),
 * llm-zoo, OpenAI's own specs (gpt-tokenizer), the live models.dev API in a refresh, the curated
 * release facts. The maker's SDK adds the models it names; a name known only to the SDK joins when a
 * package or the curated table describes it. `dropped` lists package models the live API no longer
 * lists (a refresh only): the provider withdrew them.
 */
function factsOf(src: ProviderSource, live?: DevModel[]): { facts: Map<string, Fact>; dropped: Set<string> } {
  const facts = new Map<string, Fact>();
  if (!src.dev) {
    for (const m of curatedModels(src.id)) facts.set(m.id, { ...m, from: 'curated' });
    return { facts, dropped: new Set() };
  }
  for (const m of devModels(src.dev)) facts.set(m.id, { ...m, from: 'package' });
  const dropped = new Set<string>();
  const layers = packageFactLayers(src.id);
  for (const l of layers) for (const [id, f] of l) { const m = facts.get(id); if (m) facts.set(id, layer(m, f, 'newer')); }
  const sdk = sdkModels(src.id);
  const aliases = MAKER_ALIASES[src.id] ?? {};
  const described = (name: string): PackageFact[] => describedBy(src.id, name);
  const join = (name: string): void => {
    if (facts.has(name) || aliases[name] !== undefined) return;
    const known = described(name);
    const base: Fact = known.length > 0 || releaseFact(src.id, name) ? { ...blank(name), ...nameDate(name) } : { ...borrowedFacts(name, undefined, undefined, [...facts.values()]), from: 'newer', borrowed: true };
    facts.set(name, known.reduce((m, f) => layer(m, f, 'newer'), base));
  };
  // OpenAI's union also names dated snapshots and old MMDD-suffixed ids: only undated names join.
  for (const name of sdk?.names ?? []) if (src.id !== 'openai' || (!datedName(name) && !/-\d{4}(-|$)/.test(name))) join(name);
  // llm-zoo's rows for the makers' own APIs join too (OpenAI's are covered by its SDK).
  if (src.id !== 'openai') for (const l of layers) for (const [name, f] of l) if (f.from === ZOO_PACKAGE) join(name);
  const chat = new Set(sdk?.names ?? []);
  for (const [name, m] of facts) {
    if (sdk?.otherApiOnly.has(name)) facts.set(name, { ...m, otherApiOnly: true });
    else if (m.otherApiOnly && chat.has(name)) facts.set(name, { ...m, otherApiOnly: false });
  }
  if (live && live.length > 0) {
    const listed = new Set(live.map((m) => m.id));
    // Only the pinned models.dev data can be withdrawn by the live models.dev list; SDK and package names stand.
    for (const [id, m] of facts) if (m.from === 'package' && !listed.has(id)) dropped.add(id);
    for (const m of live) {
      const o = facts.get(m.id);
      facts.set(m.id, {
        ...o, ...m, from: 'live', borrowed: false,
        releaseDate: m.releaseDate || o?.releaseDate || '', lastUpdated: m.lastUpdated || o?.lastUpdated || '',
        context: m.context || o?.context || 0, outputLimit: m.outputLimit || o?.outputLimit || 0,
      });
    }
  }
  for (const [name, f] of Object.entries(RELEASE_FACTS[src.id] ?? {})) facts.set(name, { ...layer(facts.get(name) ?? { ...blank(name), ...nameDate(name) }, f, 'curated'), from: 'curated' });
  // A Bedrock profile id ("us.meta.llama4-...") often lacks the dates its base model id carries.
  for (const [id, m] of facts) {
    const base = facts.get(id.replace(GEO, ''));
    if (base && base !== m && !m.releaseDate) facts.set(id, { ...m, releaseDate: base.releaseDate, lastUpdated: base.lastUpdated || base.releaseDate });
  }
  return { facts, dropped };
}

const GEO = /^(us|eu|apac|global|jp|au|ca)\./;

/**
 * What the fact packages (llm-zoo, OpenAI's specs) say of a name, in layering order; a package may
 * describe a dated id under its undated alias ("claude-opus-4-5" for "-20251101").
 */
function describedBy(provider: string, name: string): PackageFact[] {
  const alias = Object.entries(MAKER_ALIASES[provider] ?? {}).find(([, t]) => t === name)?.[0] ?? '';
  return packageFactLayers(provider).flatMap((l) => [l.get(name) ?? l.get(alias)].filter((f): f is PackageFact => f !== undefined));
}

/** Family of a name for borrowing facts: digits and dots removed ("gpt-5.6-luna" -> "gpt-luna"). */
const familyOf = (name: string): string => name.toLowerCase().replace(/\d+(\.\d+)*/g, '').replace(/-+/g, '-').replace(/^-|-$/g, '');
const firstWord = (name: string): string => name.toLowerCase().split(/[-/.]/)[0] ?? '';

/**
 * Facts for a model only genai-prices knows (documented defaults): capabilities, modalities and
 * limits of the provider's newest model of the same family (else of the same first word), the
 * context window genai-prices gives, the date in its name or else PRICES_AS_OF (known by then).
 */
function borrowedFacts(name: string, display: string | undefined, context: number | undefined, known: DevModel[]): DevModel {
  const newest = (pick: (m: DevModel) => boolean): DevModel | undefined =>
    known.filter(pick).sort((a, b) => (a.releaseDate < b.releaseDate ? 1 : a.releaseDate > b.releaseDate ? -1 : 0))[0];
  const like = newest((m) => familyOf(m.id) === familyOf(name)) ?? newest((m) => firstWord(m.id) === firstWord(name));
  const dated = datedName(name);
  const day = dated && dated[1].length === 8 && !dated[1].endsWith('00') ? `${dated[1].slice(0, 4)}-${dated[1].slice(4, 6)}-${dated[1].slice(6)}` : '';
  const ctx = context ?? like?.context ?? 0;
  return {
    id: name, name: display ?? name, reasoning: like?.reasoning ?? false, toolCall: like?.toolCall ?? false,
    releaseDate: day, lastUpdated: day, input: like?.input ?? ['text'], output: like?.output ?? ['text'],
    context: ctx, outputLimit: like && like.outputLimit < ctx ? like.outputLimit : 0, cost: null,
  };
}

/** The facts of a host's offer taken from its maker's own catalog record (genai-prices' context window first: the host's). */
function makerFacts(name: string, display: string | undefined, context: number | undefined, m: CatalogModel): DevModel {
  const day = m.added_at.slice(0, 10);
  const ctx = context ?? m.context_window;
  return {
    id: name, name: display ?? m.display_name ?? name, reasoning: m.capabilities.reasoning, toolCall: m.capabilities.tools,
    releaseDate: day, lastUpdated: day, input: [...m.modalities.input], output: [...m.modalities.output],
    context: ctx, outputLimit: m.max_completion_tokens < ctx ? m.max_completion_tokens : 0, cost: null,
  };
}

/**
 * Lifecycle: the curated table, else withdrawn (a refresh's live list dropped it), else the maker SDK's
 * end-of-life table, else the sources' deprecation flags, else (hosts, offline) unconfirmed since 2025-09.
 */
function lifecycle(src: ProviderSource, name: string, dev: Fact | DevModel, flags: { dropped: boolean; gpDeprecated: boolean; unconfirmed: boolean }): Partial<CatalogModel> {
  const fact = LIFECYCLE[src.id]?.[name];
  if (fact) {
    const { ref: _ref, ...rest } = fact;
    return { ...rest, ...(rest.deprecated_at ? { deprecated_at: `${rest.deprecated_at}T00:00:00+00:00` } : {}), ...(rest.retires_at ? { retires_at: `${rest.retires_at}T00:00:00+00:00` } : {}) };
  }
  if (flags.dropped) return { status: 'retired' };
  const endOfLife = sdkModels(src.id)?.endOfLife.get(name);
  if (endOfLife) return { status: 'deprecated', retires_at: `${endOfLife}T00:00:00+00:00` };
  if (dev.status === 'deprecated' || flags.gpDeprecated || ('deprecatedBy' in dev && dev.deprecatedBy)) return { status: 'deprecated' };
  if (flags.unconfirmed) return { status: 'deprecated' };
  return {};
}

/** Builds one provider's models (sorted by name) and the list of what was left out and why. */
export function buildProviderModels(src: ProviderSource, makerActive: MakerActive, live?: DevModel[]): ProviderModelsBuild {
  const { facts, dropped } = factsOf(src, live);
  const offline = !live || live.length === 0;
  const excluded: Excluded[] = [];
  const out = new Map<string, CatalogModel>();
  const borrowed = new Set<string>();
  let usedPrices = false;
  const known = [...facts.values()];
  const candidates: Array<{ name: string; dev: Fact | DevModel; gpDeprecated: boolean; pricesOnly: boolean }> =
    known.map((dev) => ({ name: dev.id, dev, gpDeprecated: false, pricesOnly: false }));
  for (const g of src.prices ? pricedModels(src.prices) : []) {
    if (known.some((d) => matchesName(g.match, d.id))) continue;
    const name = callableName(g);
    if (!name) { excluded.push({ name: g.id, reason: 'genai-prices names a family, not a callable model id' }); continue; }
    const ownModel = src.makes.includes(makerOf(name) ?? '');
    if (src.pricesOnly === 'maker-active' && !ownModel && !makerActive.has(canonicalKey(name))) { excluded.push({ name, reason: 'only in genai-prices, and its maker no longer serves it' }); continue; }
    // Facts, best first: a package that describes the name (OpenAI's specs know the `-1106`-style
    // snapshots the SDK's union leaves out; from the family's newest model gpt-3.5-turbo-1106 had read
    // images), over the maker's own record for a host's offer (from the host's families Claude on
    // Bedrock had called no tools, read no images and stopped at 8,192 tokens), over the borrowed ones.
    // Not which API serves it: a legacy completions model (davinci) stays listed as retired.
    const maker = ownModel ? null : makerActive.get(canonicalKey(name)) ?? null;
    const stated = describedBy(src.id, name);
    const base: Fact = maker ? { ...makerFacts(name, g.name, g.context_window, maker), from: 'newer' } : { ...borrowedFacts(name, g.name, g.context_window, known), from: 'newer', borrowed: stated.length === 0 };
    const { otherApiOnly: _api, ...dev } = stated.reduce((m, f) => layer(m, f, 'newer'), base);
    candidates.push({ name, dev, gpDeprecated: g.deprecated === true, pricesOnly: true });
  }
  const limited = LIMITED_ACCESS[src.id];
  for (const c of candidates) {
    const reason = exclusionReason(c.dev)
      ?? (src.serves && !src.serves.test(c.name) ? 'not a model this provider\'s API serves' : null)
      ?? (src.notThroughFormat?.pattern.test(c.name) ? src.notThroughFormat.reason : null)
      ?? ('otherApiOnly' in c.dev && c.dev.otherApiOnly ? 'the maker serves it only through another API (its SDK or specs name it for the Responses API only)' : null)
      ?? (limited?.pattern.test(c.name) ? limited.reason : null)
      ?? (src.profile?.drop.test(c.name) ? 'inference profile of another geography (see `catalog refresh`)' : null);
    if (reason) { excluded.push({ name: c.name, reason }); continue; }
    // Bedrock: a family without on-demand throughput is listed by its US cross-region profile id.
    const name = src.profile && src.profile.pattern.test(c.name) && !src.profile.keep.test(c.name) ? `${src.profile.prefix}${c.name}` : c.name;
    if (name !== c.name && facts.has(name)) { excluded.push({ name: c.name, reason: `needs an inference profile: listed as ${name}` }); continue; }
    // A curated price (a model no package prices right) wins over genai-prices' match.
    const curatedPrices = releaseFact(src.id, c.name)?.prices;
    const gp = !curatedPrices && src.prices && !c.name.endsWith(':free') && !REJECTED_PRICE_MATCHES[`${src.id}/${c.name}`] ? priceModelFor(src.prices, c.name) : null;
    const sheet = curatedPrices ? sheetFrom(curatedPrices) : sheetPricing(gp);
    if (gp && sheet) usedPrices = true;
    const model = buildModel(src, c.dev, mergePricing(c.dev.cost, sheet), { name, fallbackDate: PRICES_AS_OF, ...(gp?.context_window ? { fallbackContext: gp.context_window } : {}) });
    // Hosts: a model only the 2025-09 data lists, whose maker does not serve it now, is not confirmed served.
    const unconfirmed = offline && src.pricesOnly === 'maker-active' && 'from' in c.dev && c.dev.from === 'package'
      && !src.makes.includes(makerOf(c.name) ?? '') && !makerActive.has(canonicalKey(c.name));
    Object.assign(model, lifecycle(src, c.name, c.dev, { dropped: dropped.has(c.name), gpDeprecated: c.gpDeprecated || gp?.deprecated === true, unconfirmed }));
    dateFromName(model);
    if (!c.dev.releaseDate) knownBy(model);
    correct(model);
    out.set(model.name, model);
    if ('borrowed' in c.dev && c.dev.borrowed) borrowed.add(model.name);
  }
  applyMakerAliases(src.id, out);
  const models = [...out.values()].map(compactRetired).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { models, excluded, usedPrices, usedPackage: src.dev !== null, usedLive: !offline, borrowed };
}

/**
 * A retired model keeps only what a refusal needs (its name, dates, successor and aliases): the
 * files stay small, and nothing bills or routes it.
 */
function compactRetired(m: CatalogModel): CatalogModel {
  if (m.status !== 'retired') return m;
  const keep: Record<string, unknown> = { name: m.name, status: m.status };
  for (const k of ['deprecated_at', 'retires_at', 'successor', 'aliases'] as const) if (m[k] !== undefined) keep[k] = m[k];
  return keep as unknown as CatalogModel;
}

/** A model with no known release date existed at least by its deprecation or retirement, if earlier than the default. */
function knownBy(m: CatalogModel): void {
  const by = [m.deprecated_at, m.retires_at].filter((d): d is string => d !== undefined).sort()[0];
  if (!by || by >= m.added_at) return;
  m.added_at = by;
  m.created = Date.parse(by) / 1000;
  if (m.updated_at > by) m.updated_at = by;
}

/**
 * A dated snapshot name states its own date ("mistral-large-2512", "gpt-4o-2024-08-06"): a record
 * dated more than a month before it is a source error, and takes the name's date.
 */
function dateFromName(m: CatalogModel): void {
  const d = datedName(m.name.replace(/-v\d+(:\d+)?$/, ''));
  if (!d) return;
  const day = `${d[1].slice(0, 4)}-${d[1].slice(4, 6)}-${d[1].slice(6) === '00' ? '01' : d[1].slice(6)}`;
  const stated = Date.parse(`${day}T00:00:00Z`);
  if (!Number.isFinite(stated) || m.created * 1000 >= stated - 31 * 86_400_000) return;
  m.added_at = `${day}T00:00:00+00:00`;
  m.created = stated / 1000;
  if (m.updated_at < m.added_at) m.updated_at = m.added_at;
}

/** Source errors with a published right value (lifecycle.ts CORRECTIONS), by canonical model. */
function correct(m: CatalogModel): void {
  const fix = CORRECTIONS[canonicalKey(m.name)];
  if (!fix) return;
  if (fix.added_at && m.added_at < `${fix.added_at}T`) {
    m.added_at = `${fix.added_at}T00:00:00+00:00`;
    m.created = Date.parse(`${fix.added_at}T00:00:00Z`) / 1000;
    if (m.updated_at < m.added_at) m.updated_at = m.added_at;
  }
  if (fix.context_window) m.context_window = fix.context_window;
  if (fix.max_completion_tokens) m.max_completion_tokens = Math.min(fix.max_completion_tokens, m.context_window);
}

/** The maker's undated aliases: the alias's own record is dropped and the name listed on its target. */
function applyMakerAliases(provider: string, models: Map<string, CatalogModel>): void {
  for (const [alias, target] of Object.entries(MAKER_ALIASES[provider] ?? {})) {
    const t = models.get(target);
    if (!t) continue;
    models.delete(alias);
    t.aliases = [...new Set([...(t.aliases ?? []), alias])].sort();
  }
}
