// Names that point at other names: a provider's undated and -latest aliases (to its newest dated
// model), and the canonical key that groups one model's offers across providers.
import type { CatalogModel } from './types.ts';

/**
 * A dated snapshot name: `<family>-<date>` with the date as YYYYMMDD, YYYY-MM-DD, or Mistral/Qwen
 * style YYMM (23xx-29xx, month 01-12). Returns [family, sortable date] or null.
 */
export function datedName(name: string): [string, string] | null {
  let m = /^(.+)-(\d{4})(\d{2})(\d{2})$/.exec(name) ?? /^(.+)-(\d{4})-(\d{2})-(\d{2})$/.exec(name);
  if (m && Number(m[3]) >= 1 && Number(m[3]) <= 12) return [m[1]!, `${m[2]}${m[3]}${m[4]}`];
  m = /^(.+)-(2[3-9])(0[1-9]|1[0-2])$/.exec(name);
  if (m) return [m[1]!, `20${m[2]}${m[3]}00`];
  return null;
}

/**
 * A provider's derived aliases, merged with the ones its records declare: `<family>` (when no model
 * has that name) and `<family>-latest` point at the newest non-retired `<family>-<date>`; a
 * `<family>-latest` record with dated siblings becomes such an alias (its own record is dropped,
 * since the maker defines -latest as the newest snapshot). Names of real records never become aliases.
 * Returns alias -> target name, and the names of records replaced by aliases.
 */
export function deriveAliases(models: ReadonlyMap<string, CatalogModel>): { aliases: Map<string, string>; replaced: Set<string> } {
  const newest = new Map<string, { name: string; key: string }>();
  for (const m of models.values()) {
    if (m.status === 'retired') continue;
    const d = datedName(m.name);
    if (!d) continue;
    const key = `${d[1]}|${m.added_at}`;
    const cur = newest.get(d[0]);
    if (!cur || key > cur.key) newest.set(d[0], { name: m.name, key });
  }
  const aliases = new Map<string, string>();
  const replaced = new Set<string>();
  for (const [family, { name }] of newest) {
    const latest = `${family}-latest`;
    if (models.has(latest)) replaced.add(latest);
    aliases.set(latest, name);
    if (!models.has(family)) aliases.set(family, name);
  }
  // Declared aliases (from the sources or model_overrides) win over derived ones.
  for (const m of models.values()) {
    if (m.status === 'retired') continue;
    for (const a of m.aliases ?? []) if (!models.has(a) || replaced.has(a)) aliases.set(a, m.name);
  }
  return { aliases, replaced };
}

const GEO_PREFIX = /^(us|eu|apac|global|jp|au|ca|us-gov|regional)\./;
const VENDOR_PREFIX = /^[a-z0-9-]+\.(?=[a-z])/;
const BEDROCK_VERSION = /-v\d+(:\d+)?$|:\d+$/;

/**
 * The key that groups offers of one model across providers: lower case, without host paths
 * ("openai/", "accounts/fireworks/models/"), Bedrock geography and vendor prefixes and version
 * suffixes, OpenRouter's ":free", and with version dots written as dashes ("4.5" -> "4-5").
 */
export function canonicalKey(name: string): string {
  let k = name.toLowerCase();
  k = k.slice(k.lastIndexOf('/') + 1);
  k = k.replace(/:free$/, '');
  k = k.replace(GEO_PREFIX, '');
  if (VENDOR_PREFIX.test(k) && !/^\d/.test(k)) k = k.replace(VENDOR_PREFIX, '');
  k = k.replace(BEDROCK_VERSION, '');
  return k.replace(/(\d)\.(\d)/g, '$1-$2');
}
