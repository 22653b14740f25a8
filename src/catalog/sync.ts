// `gateway catalog sync`: regenerates providers/catalog/<provider>.yaml from the pinned sources.
// Output depends only on the installed package versions and the curated tables (no run timestamps),
// so diffs show real changes.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Document, isScalar, visit } from 'yaml';
import { canonicalKey, datedName } from './aliases.ts';
import { curatedSource } from './curated.ts';
import { buildProviderModels, type Excluded, type MakerActive } from './provider-build.ts';
import { PROVIDER_SOURCES } from './providers-map.ts';
import type { ProviderSource } from './providers-map.ts';
import { ANTHROPIC_SDK, factPackagesOf, OPENAI_SDK, OPENAI_SPECS_PACKAGE, ZOO_PACKAGE } from './package-facts.ts';
import { RELEASE_FACTS } from './release-facts.ts';
import { MODELS_PACKAGE, packageInfo, PRICES_AS_OF, PRICES_PACKAGE } from './sources.ts';
import type { DevModel, PackageInfo } from './sources.ts';
import type { CatalogFile, CatalogModel } from './types.ts';

export const GENERATED_BY = 'model-gateway catalog sync (src/catalog/sync.ts)';

/** `borrowed`: the models whose facts no source states (src/catalog/provider-build.ts). */
export type ProviderBuild = { file: CatalogFile; excluded: Excluded[]; borrowed: ReadonlySet<string> };
export type SourcePackages = { models: PackageInfo; prices: PackageInfo; curated: PackageInfo; facts: Readonly<Record<string, PackageInfo>> };

/** An SDK is read for facts only (model names, deprecation dates): its header entry says so instead of repeating its licence. */
function sdkSource(name: string): PackageInfo {
  const p = packageInfo(name);
  return { ...p, licenceText: `Model names (the SDK's model type unions) and deprecation dates, read as facts from the published package (${p.licence}); no code is used.` };
}

/** The provenance of every source the sync can use: the two pinned catalogs, the fact packages and the curated tables. */
export function sourcePackages(): SourcePackages {
  return {
    models: packageInfo(MODELS_PACKAGE), prices: packageInfo(PRICES_PACKAGE), curated: curatedSource(),
    facts: { [ZOO_PACKAGE]: packageInfo(ZOO_PACKAGE), [OPENAI_SPECS_PACKAGE]: packageInfo(OPENAI_SPECS_PACKAGE), [OPENAI_SDK]: sdkSource(OPENAI_SDK), [ANTHROPIC_SDK]: sdkSource(ANTHROPIC_SDK) },
  };
}

/** Every source entry, in header order. */
const allSources = (p: SourcePackages): PackageInfo[] => [p.models, ...Object.values(p.facts), p.curated, p.prices];

/**
 * Every provider's catalog in memory. Makers' own APIs are built first: a host's genai-prices-only
 * entry is kept only when its maker serves that model now (see ProviderSource.pricesOnly).
 */
export function buildAllCatalogs(packages: SourcePackages = sourcePackages(), live?: ReadonlyMap<string, DevModel[]>): Map<string, ProviderBuild> {
  const out = new Map<string, ProviderBuild>();
  const active = new Map<string, CatalogModel | null>();
  const order = [...PROVIDER_SOURCES.filter((s) => s.pricesOnly === 'include'), ...PROVIDER_SOURCES.filter((s) => s.pricesOnly !== 'include')];
  for (const src of order) {
    const build = buildProviderCatalog(src, packages, active, src.dev ? live?.get(src.dev) : undefined);
    if (src.pricesOnly === 'include') {
      // A host spells a maker's model by its undated name or an alias as often as by the dated id.
      for (const m of build.file.models) {
        if ((m.status ?? 'active') === 'retired') continue;
        const facts = build.borrowed.has(m.name) ? null : m;
        for (const n of [m.name, ...(m.aliases ?? []), datedName(m.name)?.[0] ?? m.name]) if (!active.get(canonicalKey(n))) active.set(canonicalKey(n), facts);
      }
    }
    out.set(src.id, build);
  }
  return out;
}

/** Builds one provider's catalog in memory: chat models only, sorted by name. */
export function buildProviderCatalog(src: ProviderSource, packages: SourcePackages, makerActive: MakerActive = new Map(), live?: DevModel[]): ProviderBuild {
  const b = buildProviderModels(src, makerActive, live);
  const used = [
    ...(b.usedPackage ? [packages.models] : []),
    ...factPackagesOf(src.id).map((n) => packages.facts[n]!),
    ...(src.dev === null || RELEASE_FACTS[src.id] ? [packages.curated] : []),
    ...(b.usedPrices ? [packages.prices] : []),
  ];
  return {
    file: {
      provider: src.id,
      generated_by: GENERATED_BY,
      sources: used.map((p) => ({ package: p.package, version: p.version, licence: p.licence })),
      models: b.models,
    },
    excluded: b.excluded,
    borrowed: b.borrowed,
  };
}

function header(file: CatalogFile, packages: PackageInfo[]): string {
  const lines = [
    `Model catalog for provider "${file.provider}". GENERATED FILE, DO NOT EDIT.`,
    `Regenerate with: npm run gateway -- catalog sync   (${GENERATED_BY})`,
    'Connection settings live in the hand-written providers/<id>.yaml; this file holds models only.',
    'Prices are USD per single token (per image, request or web search for those fields); "0" = free or not offered.',
    `Rules (docs/catalog.md): facts from the curated tables, else ${OPENAI_SPECS_PACKAGE} and ${ZOO_PACKAGE}, else ${MODELS_PACKAGE}, else defaults; each price from`,
    `${PRICES_PACKAGE} when it has one (price changes resolved as of ${PRICES_AS_OF}, later ones as pricing.schedule), else models.dev.`,
    'status: deprecated models are served and listed with ?include=deprecated; retired ones are refused naming their successor.',
    '',
    'Sources and licence notices:',
  ];
  for (const p of packages) {
    lines.push('', `--- ${p.package}@${p.version} (${p.licence}) ---`, ...p.licenceText.split(/\r?\n/));
  }
  return lines.map((l) => (l ? `# ${l}` : '#')).join('\n') + '\n';
}

/** The exact bytes of one catalog file: licence header, then stable YAML (keys in type order). */
export function renderCatalogFile(file: CatalogFile, packages: PackageInfo[]): string {
  const doc = new Document(file);
  // Short lists of scalars (modalities) read best on one line; lists of maps stay in block style.
  visit(doc, { Seq: (_key, node) => { if (node.items.every((item) => isScalar(item))) node.flow = true; } });
  const body = doc.toString({ lineWidth: 0, defaultStringType: 'QUOTE_DOUBLE', defaultKeyType: 'PLAIN', indent: 2 });
  return `${header(file, packages.filter((p) => file.sources.some((s) => s.package === p.package)))}\n${body}`;
}

/**
 * Rewrites every provider's catalog file under outDir. `written` lists every file path produced;
 * `changed` the subset whose bytes differ from what was there before (new files included).
 * Never touches files other than <outDir>/<provider>.yaml for the providers in PROVIDER_SOURCES.
 */
export async function syncCatalog(opts: { outDir: string }): Promise<{ written: string[]; changed: string[] }> {
  const packages = sourcePackages();
  await mkdir(opts.outDir, { recursive: true });
  const written: string[] = [];
  const changed: string[] = [];
  for (const [id, { file }] of buildAllCatalogs(packages)) {
    const text = renderCatalogFile(file, allSources(packages));
    const path = join(opts.outDir, `${id}.yaml`);
    const before = await readFile(path, 'utf8').catch(() => null);
    if (before !== text) {
      await writeFile(path, text);
      changed.push(path);
    }
    written.push(path);
  }
  return { written, changed };
}
