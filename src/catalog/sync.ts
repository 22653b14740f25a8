// `gateway catalog sync`: regenerates providers/catalog/<provider>.yaml from the pinned npm packages.
// Output depends only on the installed package versions (no run timestamps), so diffs show real changes.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Document, isScalar, visit } from 'yaml';
import { buildModel, exclusionReason } from './build.ts';
import { curatedModels, curatedSource } from './curated.ts';
import { PROVIDER_SOURCES } from './providers-map.ts';
import type { ProviderSource } from './providers-map.ts';
import { devModels, MODELS_PACKAGE, packageInfo, priceSheet, PRICES_AS_OF, PRICES_PACKAGE } from './sources.ts';
import type { PackageInfo } from './sources.ts';
import type { CatalogFile, CatalogModel } from './types.ts';

export const GENERATED_BY = 'model-gateway catalog sync (src/catalog/sync.ts)';

export type ProviderBuild = { file: CatalogFile; excluded: Array<{ name: string; reason: string }> };
export type SourcePackages = { models: PackageInfo; prices: PackageInfo; curated: PackageInfo };

/** The provenance of every source the sync can use: the two packages and the curated table. */
export function sourcePackages(): SourcePackages {
  return { models: packageInfo(MODELS_PACKAGE), prices: packageInfo(PRICES_PACKAGE), curated: curatedSource() };
}

/** Builds one provider's catalog in memory: chat models only, sorted by name. */
export function buildProviderCatalog(src: ProviderSource, packages: SourcePackages): ProviderBuild {
  const models: CatalogModel[] = [];
  const excluded: ProviderBuild['excluded'] = [];
  let usedPrices = false;
  for (const dev of src.dev ? devModels(src.dev) : curatedModels(src.id)) {
    const reason = exclusionReason(dev);
    if (reason) { excluded.push({ name: dev.id, reason }); continue; }
    const priced = src.prices ? priceSheet(src.prices, dev.id) : null;
    const model = buildModel(src, dev, priced?.sheet ?? null);
    if (!model) { excluded.push({ name: dev.id, reason: 'no price in either source' }); continue; }
    if (priced) usedPrices = true;
    models.push(model);
  }
  models.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const facts = src.dev ? packages.models : packages.curated;
  const used = usedPrices ? [facts, packages.prices] : [facts];
  return {
    file: {
      provider: src.id,
      generated_by: GENERATED_BY,
      sources: used.map((p) => ({ package: p.package, version: p.version, licence: p.licence })),
      models,
    },
    excluded,
  };
}

function header(file: CatalogFile, packages: PackageInfo[]): string {
  const lines = [
    `Model catalog for provider "${file.provider}". GENERATED FILE, DO NOT EDIT.`,
    `Regenerate with: npm run gateway -- catalog sync   (${GENERATED_BY})`,
    'Connection settings live in the hand-written providers/<id>.yaml; this file holds models only.',
    'Prices are USD per single token (per image, request or web search for those fields); "0" = free or not offered.',
    `Rules: dates, limits, modalities and capabilities from ${MODELS_PACKAGE} (src/catalog/curated.ts for providers it`,
    `lacks); each price from ${PRICES_PACKAGE} when it has one (scheduled price changes resolved as of ${PRICES_AS_OF}),`,
    `else from ${MODELS_PACKAGE}. See docs/catalog.md.`,
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
  for (const src of PROVIDER_SOURCES) {
    const { file } = buildProviderCatalog(src, packages);
    const text = renderCatalogFile(file, [packages.models, packages.curated, packages.prices]);
    const path = join(opts.outDir, `${src.id}.yaml`);
    const before = await readFile(path, 'utf8').catch(() => null);
    if (before !== text) {
      await writeFile(path, text);
      changed.push(path);
    }
    written.push(path);
  }
  return { written, changed };
}
