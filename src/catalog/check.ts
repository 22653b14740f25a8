// `catalog check` (and `check`): the invariants of invariants.ts over a compiled config's whole
// catalog (generated files, refresh overlay, hand-written models, overrides), plus its compile notes.
import { catalogProblems, type CatalogProblem, type CheckedModel } from './invariants.ts';
import type { ModelIndex, Offer } from './model-index.ts';

export type CheckableConfig = {
  models: ReadonlyMap<string, Offer & { provider: { format: string } }>;
  catalog: ModelIndex;
};

/** Every invariant problem of the compiled catalog; retired ids are checked for a usable successor. */
export function checkCatalog(cfg: CheckableConfig, now = Date.now()): CatalogProblem[] {
  const models: CheckedModel[] = [...cfg.models.values()].map((e) => ({
    provider: e.providerId, format: e.provider.format, model: e.model, ...(e.model.hand_written ? { handWritten: true } : {}),
  }));
  const out = catalogProblems(models, now);
  for (const r of cfg.catalog.retired.values()) {
    if (r.successor && !cfg.models.has(r.successor)) {
      out.push({ id: r.id, check: 'lifecycle', message: `successor "${r.successor}" is not a servable model` });
    }
  }
  return out;
}

/** Human-readable lines for the command line, grouped by check. */
export function formatProblems(problems: readonly CatalogProblem[]): string[] {
  return [...problems].sort((a, b) => (a.check + a.id < b.check + b.id ? -1 : 1)).map((p) => `  [${p.check}] ${p.id}: ${p.message}`);
}
