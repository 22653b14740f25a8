// gateway.yaml's router defaults checked against the catalog a config serves: a default `models`
// entry nothing routes (a catalog refresh retired it, its provider lost its key, a typo) is not a
// config error, since the catalog may come back, but every routed request without `models` then gets
// a 400, so the gateway names each such entry when a config is loaded (start, reload, `check`).
import type { Config } from '../config/types.ts';
import { GatewayError } from '../gateway-error.ts';
import { candidateSet, resolveModels } from './candidates.ts';

/** One line per default model entry the config cannot route, naming where it is configured and why. */
export function unroutableDefaults(cfg: Config): string[] {
  const s = cfg.router;
  const lists: Array<[string, readonly string[]]> = [];
  if (s.defaults?.models) lists.push(['router.defaults.models', s.defaults.models]);
  for (const k of s.keyDefaults) if (k.defaults.models) lists.push([`router.key_defaults["${k.glob}"].models`, k.defaults.models]);
  if (lists.length === 0) return [];
  const set = candidateSet(cfg);
  const out: string[] = [];
  for (const [where, models] of lists) {
    models.forEach((name, i) => {
      try { resolveModels(cfg, set, [name]); } catch (e) {
        if (!(e instanceof GatewayError)) throw e;
        out.push(`${where}[${i}]: ${e.message.replace(/^models\[0\]: /, '')}`);
      }
    });
  }
  return out;
}

/** The warning a load prints for those entries, or null when every default model routes. */
export function defaultsWarning(cfg: Config): string | null {
  const lines = unroutableDefaults(cfg);
  if (lines.length === 0) return null;
  return `config: ${lines.length} router default model${lines.length === 1 ? '' : 's'} cannot be routed now; routed requests that take this list get a 400 until it is fixed:\n${lines.map((l) => `  ${l}`).join('\n')}`;
}
