// Invariants every catalog model must satisfy, checked over the whole compiled catalog by the test
// suite and by `catalog check` (and `check`): prices, limits, dates, zero prices, and whether the
// model can be called through its provider's declared wire format.
import { compareDecimal, isDecimalString } from './decimal.ts';
import { exclusionReason, looksFree } from './build.ts';
import { FAMILY_SINCE } from './lifecycle.ts';
import { PROVIDER_SOURCES } from './providers-map.ts';
import type { CatalogModel, Pricing, PriceTier } from './types.ts';

export type CatalogProblem = { id: string; check: InvariantCheck; message: string };
export type InvariantCheck = 'prices' | 'limits' | 'dates' | 'zero-price' | 'callable' | 'lifecycle';

/** One model as the checks see it: its provider, that provider's wire format, and where it came from. */
export type CheckedModel = { provider: string; format: string; model: CatalogModel; handWritten?: boolean };

const SOURCES = new Map(PROVIDER_SOURCES.map((s) => [s.id, s]));
const isZero = (v: string | undefined): boolean => v === undefined || compareDecimal(v, '0') === 0;

/**
 * The highest plausible price per field: a refresh source answering a price above it (a models.dev cost
 * of 1e300, a sheet in dollars where tokens were meant) would bill every request absurdly, so the
 * refresh drops that model's data. Per token: $10,000 a million, 16x the dearest model of 2026 (o1-pro
 * output, $600); per image, request or search: $10 (the dearest of each is cents).
 */
const PER_UNIT = new Set(['image', 'request', 'web_search']);
const ceilingOf = (field: string): string => (PER_UNIT.has(field) ? '10' : '0.01');
/**
 * The lowest plausible price above zero per token: $0.00001 a million, 360x below the cheapest price in
 * the 2026 catalog (a cache read of $0.0036 a million). A price under it is a unit error (a price per
 * million divided by a million twice), or a source's noise (1e-300): it would make a model all but free
 * to the router, which would send it every request. Zero stays a price (free and local models).
 */
const TOKEN_FLOOR = '0.00000000001';

function priceProblems(p: Pricing | Omit<Pricing, 'schedule'>, where: string): string[] {
  const out: string[] = [];
  const above = (fields: Record<string, unknown>, label: string): void => {
    for (const [f, v] of Object.entries(fields)) {
      if (typeof v !== 'string' || !isDecimalString(v)) continue;
      const shown = v.length > 40 ? `${v.slice(0, 40)}... (${v.length} digits)` : v;
      if (compareDecimal(v, ceilingOf(f)) > 0) out.push(`${where}${label}${f} ${shown} is above the plausible ceiling ${ceilingOf(f)}`);
      else if (!PER_UNIT.has(f) && !isZero(v) && compareDecimal(v, TOKEN_FLOOR) < 0) out.push(`${where}${label}${f} ${shown} is below the plausible floor ${TOKEN_FLOOR} a token (a unit error? zero is a price)`);
    }
  };
  above(p, ' ');
  const cacheAbove = (read: string | undefined, prompt: string | undefined, label: string): void => {
    if (!isZero(read) && prompt !== undefined && !isZero(prompt) && compareDecimal(read!, prompt) >= 0) out.push(`${where}${label}cache read ${read} is not below the input price ${prompt}`);
  };
  cacheAbove(p.input_cache_read, p.prompt, ' ');
  let last = -1;
  for (const t of (p.tiers ?? []) as PriceTier[]) {
    if (t.above_input_tokens <= last) out.push(`${where} tiers are not in ascending order of above_input_tokens`);
    last = t.above_input_tokens;
    const { above_input_tokens: _a, ...prices } = t;
    above(prices, ` tier above ${t.above_input_tokens}: `);
    cacheAbove(t.input_cache_read ?? p.input_cache_read, t.prompt ?? p.prompt, ` tier above ${t.above_input_tokens}: `);
  }
  return out;
}

/** Every problem of one model (an empty list when it is sound). */
export function modelProblems(c: CheckedModel, now = Date.now()): CatalogProblem[] {
  const m = c.model;
  const id = `${c.provider}/${m.name}`;
  const out: CatalogProblem[] = [];
  const add = (check: InvariantCheck, message: string): void => { out.push({ id, check, message }); };
  const live = (m.status ?? 'active') !== 'retired';

  for (const msg of priceProblems(m.pricing, 'pricing:')) add('prices', msg);
  let from = '';
  for (const ch of m.pricing.schedule ?? []) {
    if (!(Date.parse(ch.from) > 0)) add('prices', `schedule entry has no valid date: ${ch.from}`);
    if (ch.from <= from) add('prices', 'schedule is not in date order');
    from = ch.from;
    for (const msg of priceProblems(ch.pricing, `pricing from ${ch.from}:`)) add('prices', msg);
  }

  if (m.max_completion_tokens > m.context_window) add('limits', `output limit ${m.max_completion_tokens} is above the context window ${m.context_window}`);
  else if (!c.handWritten && m.max_completion_tokens === m.context_window) add('limits', `output limit equals the context window (${m.context_window}): a source wrote the window into the output field`);

  const added = Date.parse(m.added_at);
  if (!(m.created > 0)) add('dates', 'created is 0: no release date');
  if (m.created !== Math.floor(added / 1000)) add('dates', `created ${m.created} is not added_at ${m.added_at}`);
  if (Date.parse(m.updated_at) < added) add('dates', `updated_at ${m.updated_at} is before added_at ${m.added_at}`);
  if (added > now + 86_400_000) add('dates', `added_at ${m.added_at} is in the future`);
  const family = FAMILY_SINCE.find(([re]) => re.test(m.name));
  if (family && added < Date.parse(`${family[1]}T00:00:00Z`) - 31 * 86_400_000) add('dates', `added_at ${m.added_at.slice(0, 10)} predates the ${family[0].source} family (first released ${family[1]})`);
  if (m.retires_at && m.added_at > m.retires_at) add('dates', `added_at ${m.added_at} is after retires_at ${m.retires_at}`);
  if (m.deprecated_at && m.retires_at && m.deprecated_at > m.retires_at) add('dates', `deprecated_at ${m.deprecated_at} is after retires_at ${m.retires_at}`);

  if (live && isZero(m.pricing.prompt) && isZero(m.pricing.completion) && !m.unpriced && !looksFree(m.name) && !c.handWritten) {
    add('zero-price', 'priced "0" for input and output without being free (an OpenRouter :free route) or marked unpriced');
  }

  if (live) for (const msg of callableProblems(c)) add('callable', msg);
  return out;
}

/** Why the model cannot be called through its provider's declared format, if it cannot. */
function callableProblems(c: CheckedModel): string[] {
  const m = c.model;
  const out: string[] = [];
  if (!m.modalities.output.includes('text')) out.push('produces no text: the chat formats cannot return it');
  const upstream = m.upstream ?? m.name;
  if (!upstream || /\s/.test(upstream)) out.push(`upstream id "${upstream}" is empty or has whitespace`);
  if (c.handWritten) return out;
  const not = exclusionReason({ id: m.name, name: m.name, reasoning: false, toolCall: false, releaseDate: '', lastUpdated: '', input: m.modalities.input, output: m.modalities.output, context: m.context_window, outputLimit: 0, cost: null });
  if (not) out.push(not);
  const src = SOURCES.get(c.provider);
  if (!src) return out;
  if (src.serves && !src.serves.test(m.name)) out.push(`${c.provider}'s ${c.format} API does not serve this model`);
  if (src.notThroughFormat?.pattern.test(m.name)) out.push(src.notThroughFormat.reason);
  if (src.profile && src.profile.pattern.test(upstream) && !src.profile.keep.test(upstream)) {
    out.push(`has no on-demand throughput: call it through a cross-region inference profile (${src.profile.prefix}${upstream})`);
  }
  if (src.profile?.drop.test(upstream)) out.push('an inference profile of another geography than the default region');
  return out;
}

/** Problems across many models, plus the cross-model ones: successors that do not exist or are retired. */
export function catalogProblems(models: readonly CheckedModel[], now = Date.now()): CatalogProblem[] {
  const out = models.flatMap((c) => modelProblems(c, now));
  const byId = new Map(models.map((c) => [`${c.provider}/${c.model.name}`, c.model]));
  for (const c of models) {
    const s = c.model.successor;
    if (!s) continue;
    const target = byId.get(s.includes('/') && !byId.has(`${c.provider}/${s}`) ? s : `${c.provider}/${s}`);
    const id = `${c.provider}/${c.model.name}`;
    if (!target) out.push({ id, check: 'lifecycle', message: `successor "${s}" is not in the catalog` });
    else if (target.status === 'retired') out.push({ id, check: 'lifecycle', message: `successor "${s}" is itself retired` });
  }
  return out;
}
