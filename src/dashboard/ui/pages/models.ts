// Models: the catalog browser (search, provider, capability; prices per million tokens, limits, dates,
// tier) and the comparison from real traffic and feedback: per model and metric the mean or rate with a
// 95% interval and count, cost per request, latency percentiles, error rate; cost-vs-quality scatter.
import { api, qs } from '../api.ts';
import type { ModelComparison, ModelInfo, ModelPerformance } from '../api-types.ts';
import { scatterChart } from '../charts.ts';
import { h, mount } from '../dom.ts';
import { compact, ms, pct, usd, usdTick } from '../format.ts';
import { navigate, readQuery, withQuery } from '../url-state.ts';
import { chart, errorBox, field, section, select, table } from '../widgets.ts';
import { RANGES, rangeOf } from './usage.ts';

const CAPS = ['tools', 'vision', 'reasoning', 'structured_output', 'prompt_caching'];

export function filterModels(models: ModelInfo[], q: Record<string, string>): ModelInfo[] {
  const term = (q.q ?? '').toLowerCase();
  return models.filter((m) => (!term || m.id.toLowerCase().includes(term) || (m.display_name ?? '').toLowerCase().includes(term))
    && (!q.provider || m.provider === q.provider) && (!q.cap || m.capabilities[q.cap] === true));
}

function metricCell(p: ModelPerformance, metric: string): string {
  const s = p.metrics.find((m) => m.metric === metric);
  if (!s || s.mean === null) return '–';
  const f = (n: number): string => (s.type === 'boolean' ? pct(n) : n.toFixed(3));
  return `${f(s.mean)}${s.ci_low !== null && s.ci_high !== null ? ` (${f(s.ci_low)}–${f(s.ci_high)})` : ''} n=${compact(s.count)}`;
}

function comparison(c: ModelComparison, metric: string, chosen: string[]): HTMLElement[] {
  const rows = c.models.filter((m) => chosen.length === 0 || chosen.includes(m.model));
  const points = rows.flatMap((m) => {
    const s = m.metrics.find((x) => x.metric === metric);
    return s && s.mean !== null && m.cost_per_request_usd !== null ? [{ label: m.model, x: Number(m.cost_per_request_usd), y: s.mean, yLow: s.ci_low, yHigh: s.ci_high }] : [];
  });
  const side = rows.slice(0, 4);
  return [
    table(['Model', 'Requests', 'Error rate', 'Cost / request', 'Latency p50 / p95', 'TTFT p50', metric ? `${metric} (95% CI)` : 'Metric'], rows.map((m) => [
      m.model, compact(m.requests), pct(m.error_rate), usd(m.cost_per_request_usd), `${ms(m.latency_ms.p50)} / ${ms(m.latency_ms.p95)}`, ms(m.ttft_ms.p50), metric ? metricCell(m, metric) : '–']),
    { numeric: [1, 2, 3, 4, 5], empty: 'No traffic in this range.' }),
    metric && points.length ? chart(scatterChart({
      // Costs per request span decades ($0.0000004 to $1,234 in a month's traffic): on a linear axis the cheap models all sat on $0.
      title: `Cost per request against ${metric}`, points, xTitle: 'cost per request (USD, log scale)', yTitle: metric,
      xFormat: (n) => usd(String(n)), yFormat: (n) => n.toFixed(2), xLog: true, xTickFormat: usdTick,
    }))
      : h('p', { class: 'muted' }, metric ? 'No model has both traffic and this metric in the range.' : 'Pick a feedback metric to plot cost against quality.'),
    side.length >= 2 ? section('Side by side', table(['', ...side.map((m) => m.model)], [
      ['Requests', ...side.map((m) => compact(m.requests))], ['Error rate', ...side.map((m) => pct(m.error_rate))],
      ['Cost per request', ...side.map((m) => usd(m.cost_per_request_usd))], ['Latency p50', ...side.map((m) => ms(m.latency_ms.p50))],
      ['Latency p95', ...side.map((m) => ms(m.latency_ms.p95))], ['Latency p99', ...side.map((m) => ms(m.latency_ms.p99))],
      ['TTFT p50', ...side.map((m) => ms(m.ttft_ms.p50))], ['Output tokens / request', ...side.map((m) => compact(m.output_tokens_per_request))],
      ...c.metrics.map((name) => [name, ...side.map((m) => metricCell(m, name))]),
    ])) : null,
  ].filter((x): x is HTMLElement => x !== null);
}

export async function modelsPage(root: HTMLElement): Promise<void> {
  const q = readQuery();
  const set = (patch: Record<string, string | null>): void => navigate(`/dashboard/models${withQuery(q, patch)}`, true);
  const range = rangeOf(q.range ?? '30d');
  const [catalog, cmp] = await Promise.allSettled([api.models(), api.compare(qs({ ...range, model: q.compare }))]);
  const models = catalog.status === 'fulfilled' ? catalog.value.data : [];
  const providers = [...new Set(models.map((m) => m.provider))].sort();
  const search = h('input', { type: 'search', name: 'q', value: q.q ?? '', placeholder: 'name or id' });
  search.addEventListener('change', () => set({ q: search.value || null }));
  const prov = select('provider', [['', 'All providers'], ...providers.map((p): [string, string] => [p, p])], q.provider ?? '');
  prov.addEventListener('change', () => set({ provider: prov.value || null }));
  const cap = select('cap', [['', 'Any capability'], ...CAPS.map((c): [string, string] => [c, c.replace('_', ' ')])], q.cap ?? '');
  cap.addEventListener('change', () => set({ cap: cap.value || null }));
  const rangeSel = select('range', RANGES, q.range ?? '30d');
  rangeSel.addEventListener('change', () => set({ range: rangeSel.value }));
  const metrics = cmp.status === 'fulfilled' ? cmp.value.metrics : [];
  const metric = q.metric ?? metrics[0] ?? '';
  const metricSel = select('metric', [['', 'No metric'], ...metrics.map((m): [string, string] => [m, m])], metric);
  metricSel.addEventListener('change', () => set({ metric: metricSel.value || null }));
  const compareInput = h('input', { type: 'text', name: 'compare', value: q.compare ?? '', placeholder: 'all with traffic, or a,b,c' });
  compareInput.addEventListener('change', () => set({ compare: compareInput.value.trim() || null }));
  const shown = filterModels(models, q);
  mount(root, h('h1', null, 'Models'),
    section('Comparison from traffic and feedback',
      h('form', { class: 'filters', onsubmit: (e: Event) => e.preventDefault() }, field('Range', rangeSel), field('Metric', metricSel), field('Models', compareInput)),
      ...(cmp.status === 'fulfilled' ? comparison(cmp.value, metric, []) : [errorBox(cmp.reason)])),
    section(`Catalog (${shown.length} of ${models.length})`,
      h('form', { class: 'filters', role: 'search', onsubmit: (e: Event) => e.preventDefault() }, field('Search', search), field('Provider', prov), field('Capability', cap)),
      catalog.status === 'rejected' ? errorBox(catalog.reason) : null,
      catalogTable(shown)));
}

const PAGE = 100;
const catalogRow = (m: ModelInfo) => [
  h('div', null, h('strong', null, m.id), m.display_name ? h('div', { class: 'muted small' }, m.display_name) : null, m.status !== 'active' ? h('div', { class: 'muted small' }, m.status) : null),
  m.unpriced ? 'unpriced' : usd(m.prices_per_million.prompt ?? '0'), m.unpriced ? '' : usd(m.prices_per_million.completion ?? '0'),
  m.prices_per_million.input_cache_read ? usd(m.prices_per_million.input_cache_read) : '–', compact(m.context_window), compact(m.max_completion_tokens),
  CAPS.filter((c) => m.capabilities[c]).join(', ') || '–', m.reliability_tier === 1 ? 'first party' : 'third party', m.updated_at.slice(0, 10)];

/** The catalog a hundred rows at a time (the page is ready sooner; "Show more" adds the next hundred). */
function catalogTable(shown: ModelInfo[]): HTMLElement {
  const wrap = h('div', null);
  let n = 0;
  const more = h('button', { type: 'button', class: 'secondary' });
  const render = (): void => {
    n = Math.min(shown.length, n + PAGE);
    more.textContent = `Show ${Math.min(PAGE, shown.length - n)} more (${n} of ${shown.length} shown)`;
    more.hidden = n >= shown.length;
    mount(wrap, table(['Model', 'Input / 1M', 'Output / 1M', 'Cache read / 1M', 'Context', 'Max output', 'Capabilities', 'Tier', 'Updated'], shown.slice(0, n).map(catalogRow), { numeric: [1, 2, 3, 4, 5] }), more);
  };
  more.addEventListener('click', render);
  render();
  return wrap;
}
