// The router as a record of GET /v1/models: clients that pick their model from the listing (chat UIs,
// Codex's and other agents' model lists) can pick "router" there instead of knowing to type it. The
// record summarises the router-eligible models of the config version: the largest context and output
// among them, the modalities and capabilities at least one of them has (routing then keeps a request
// that needs one on the models that have it), how many there are. Its prices are "0", which the spec
// defines as "not available for that model": a routed answer is billed at the chosen model's prices.
import type { ListingCapability, ListingQuery } from '../catalog/listing.ts';
import { LISTING_CAPABILITIES } from '../catalog/listing.ts';
import type { Config } from '../config/types.ts';
import { routable } from './candidates.ts';

/** The id the listing gives the router: the `model` value that asks for router mode. */
export const ROUTER_ID = 'router';

const NO_PRICE = {
  prompt: '0', completion: '0', image: '0', request: '0', web_search: '0', internal_reasoning: '0',
  input_cache_read: '0', input_cache_write: '0', input_cache_write_1h: '0',
};

const records = new WeakMap<Config, Record<string, unknown> | null>();

/** The router's listing record for this config version; null when no model is router-eligible. */
export function routerRecord(cfg: Config): Record<string, unknown> | null {
  if (records.has(cfg)) return records.get(cfg)!;
  let n = 0, context = 0, output = 0, created = 0, tier = 2;
  let added = '', updated = '';
  const input = new Set<string>();
  const caps: Record<string, boolean> = {};
  for (const e of cfg.models.values()) {
    if (!routable(e)) continue;
    const m = e.model;
    n++;
    context = Math.max(context, m.context_window);
    output = Math.max(output, m.max_completion_tokens);
    created = Math.max(created, m.created);
    tier = Math.min(tier, m.reliability_tier);
    if (added === '' || m.added_at < added) added = m.added_at;
    if (m.updated_at > updated) updated = m.updated_at;
    for (const i of m.modalities.input) input.add(i);
    for (const [k, v] of Object.entries(m.capabilities)) if (v === true) caps[k] = true;
  }
  const record = n === 0 ? null : {
    id: ROUTER_ID, object: 'model', created, owned_by: ROUTER_ID, name: 'Router',
    description: `Picks one of ${n} models for each request within its cost bounds (models, max_cost, max_cost_per_million_tokens, willingness_to_pay); the answer's model names the one chosen, and it is billed at that model's prices.`,
    context_length: context, max_completion_tokens: output,
    architecture: { modality: `${[...input].sort().join('+')}->text`, input_modalities: [...input].sort(), output_modalities: ['text'] },
    pricing: { ...NO_PRICE }, capabilities: caps,
    top_provider: { context_length: context, max_completion_tokens: output },
    added_at: added, updated_at: updated, reliability_tier: tier, candidates: n,
  };
  records.set(cfg, record);
  return record;
}

/** Whether the router's record passes a listing query: `?provider=router` or none, and capabilities some candidate has. */
export function routerMatches(record: Record<string, unknown>, q: ListingQuery): boolean {
  if (q.provider !== undefined && q.provider !== ROUTER_ID) return false;
  const caps = record.capabilities as Record<string, boolean>;
  return q.capabilities.every((c: ListingCapability) => caps[LISTING_CAPABILITIES[c]] === true);
}
