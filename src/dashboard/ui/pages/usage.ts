// Usage: totals, time series (cost, requests, tokens, latency percentiles, error rate) and the top groups,
// from one GET /usage call; every filter lives in the URL; CSV/JSONL export of the same view.
import { api, API, qs } from '../api.ts';
import type { UsageMetrics, UsageReport } from '../api-types.ts';
import { lineChart, barChart, seriesClass } from '../charts.ts';
import { h, mount } from '../dom.ts';
import { bucketLabel, compact, ms, pct, pctTick, timeZone, usd, usdTick } from '../format.ts';
import { navigate, readQuery, withQuery } from '../url-state.ts';
import { card, chart, errorBox, field, section, select, table } from '../widgets.ts';

export const RANGES: Array<[string, string]> = [['1h', 'Last hour'], ['24h', 'Last 24 hours'], ['7d', 'Last 7 days'], ['30d', 'Last 30 days'], ['90d', 'Last 90 days'], ['365d', 'Last year']];

/** from/to for a range preset ("24h", "7d") ending now. */
export function rangeOf(preset: string, now = Date.now()): { from: string; to: string } {
  const m = /^(\d+)([hd])$/.exec(preset) ?? ['', '7', 'd'];
  const span = Number(m[1]) * (m[2] === 'h' ? 3_600_000 : 86_400_000);
  return { from: new Date(now - span).toISOString(), to: new Date(now).toISOString() };
}

const GROUPS: Array<[string, string]> = [['none', 'No grouping'], ['model', 'Model'], ['key', 'Key'], ['provider', 'Provider'], ['route', 'Route'], ['user', 'User']];
const BUCKETS: Array<[string, string]> = [['', 'Auto'], ['hour', 'Hour'], ['day', 'Day'], ['week', 'Week'], ['month', 'Month']];

/** The API query for the page's URL state. */
export function usageApiQuery(q: Record<string, string>, now = Date.now()): string {
  const r = q.from && q.to ? { from: q.from, to: q.to } : rangeOf(q.range ?? '7d', now);
  return qs({ ...r, bucket: q.bucket, group: q.group ?? 'model', tz: timeZone(), key: q.key, model: q.model, provider: q.provider, route: q.route, user: q.user, top: 8 });
}

export async function usagePage(root: HTMLElement): Promise<void> {
  const q = readQuery();
  const set = (patch: Record<string, string | null>): void => navigate(`/dashboard/usage${withQuery(q, patch)}`);
  const group = q.group ?? 'model';
  const text = (name: string, label: string, placeholder: string) => {
    const input = h('input', { type: 'text', name, value: q[name] ?? '', placeholder });
    input.addEventListener('change', () => set({ [name]: input.value.trim() || null }));
    return field(label, input);
  };
  const range = select('range', RANGES, q.range ?? '7d');
  range.addEventListener('change', () => set({ range: range.value, from: null, to: null }));
  const groupSel = select('group', GROUPS, group);
  groupSel.addEventListener('change', () => set({ group: groupSel.value }));
  const bucketSel = select('bucket', BUCKETS, q.bucket ?? '');
  bucketSel.addEventListener('change', () => set({ bucket: bucketSel.value || null }));
  const apiQuery = usageApiQuery(q);
  const filters = h('form', { class: 'filters', 'aria-label': 'Usage filters', onsubmit: (e: Event) => e.preventDefault() },
    field('Range', range), field('Group by', groupSel), field('Bucket', bucketSel),
    text('model', 'Model', 'provider/model'), text('key', 'Key id', 'any'), text('provider', 'Provider', 'any'), text('route', 'Route', 'any'),
    h('div', { class: 'field export' }, h('span', { class: 'label' }, 'Export'),
      h('div', null, h('a', { href: `${API}/usage/export${apiQuery}&format=csv`, download: '' }, 'CSV'), ' · ', h('a', { href: `${API}/usage/export${apiQuery}&format=jsonl`, download: '' }, 'JSONL'))));
  const body = h('div', { 'aria-live': 'polite' }, h('p', { class: 'loading' }, 'Loading usage…'));
  mount(root, h('h1', null, 'Usage'), filters, body);
  try {
    mount(body, ...render(await api.usage(apiQuery)));
  } catch (e) {
    mount(body, errorBox(e));
  }
}

const metric = (name: string, pick: (m: UsageMetrics) => number | null) => ({ name, pick });

function render(r: UsageReport): HTMLElement[] {
  const t = r.totals;
  const labels = r.buckets.map((b) => bucketLabel(b, r.bucket, r.tz));
  const groups = [...r.groups, ...(r.other ? [r.other] : [])];
  const isOther = (g: { label: string }): boolean => r.other !== null && g === r.other;
  const perGroup = (pick: (m: UsageMetrics) => number | null) => (groups.length ? groups : [{ label: 'All', points: r.total_series }])
    .map((g) => ({ name: g.label, values: g.points.map(pick), other: isOther(g) }));
  const cards = h('div', { class: 'cards' },
    card('Requests', compact(t.requests), `${compact(t.errors)} errors · ${pct(t.error_rate)}`),
    card('Cost', usd(t.cost_usd), t.requests ? `${usd(String(Number(t.cost_usd) / t.requests))} per request` : undefined),
    card('Input tokens', compact(t.input_tokens), `${compact(t.cache_read_tokens)} cached · ${compact(t.cache_write_tokens)} cache writes`),
    card('Output tokens', compact(t.output_tokens), `${compact(t.reasoning_tokens)} reasoning`),
    card('Latency p50 / p95', `${ms(t.latency_ms.p50)} / ${ms(t.latency_ms.p95)}`, `p99 ${ms(t.latency_ms.p99)}`),
    card('Time to first token', `${ms(t.ttft_ms.p50)} / ${ms(t.ttft_ms.p95)}`, 'p50 / p95 (streams)'));
  const legend = h('ul', { class: 'legend', 'aria-label': 'Series' }, ...groups.map((g, i) => h('li', { class: seriesClass(i, isOther(g)) }, h('span', { class: 'swatch', 'aria-hidden': 'true' }), g.label)));
  const charts = [
    metric('Cost (USD)', (m) => Number(m.cost_usd)), metric('Requests', (m) => m.requests),
  ].map((c) => section(c.name, chart(lineChart({ title: `${c.name} per ${r.bucket}`, labels, series: perGroup(c.pick), stacked: true,
    ...(c.name.startsWith('Cost') ? { format: (n: number) => usd(String(n)), tickFormat: usdTick } : { format: compact, integer: true }) }))));
  const latency = section('Latency and errors',
    chart(lineChart({ title: `Latency percentiles per ${r.bucket}`, labels, format: ms, series: [
      { name: 'p50', values: r.total_series.map((m) => m.latency_ms.p50) }, { name: 'p95', values: r.total_series.map((m) => m.latency_ms.p95) },
      { name: 'p99', values: r.total_series.map((m) => m.latency_ms.p99) }, { name: 'TTFT p50', values: r.total_series.map((m) => m.ttft_ms.p50) }] })),
    h('ul', { class: 'legend' }, ...['p50', 'p95', 'p99', 'TTFT p50'].map((n, i) => h('li', { class: `series-${i}` }, h('span', { class: 'swatch', 'aria-hidden': 'true' }), n))),
    chart(lineChart({ title: `Error rate per ${r.bucket}`, labels, height: 140, format: (n) => pct(n), tickFormat: pctTick, series: [{ name: 'error rate', values: r.total_series.map((m) => m.error_rate) }] })),
    chart(lineChart({ title: `Tokens per ${r.bucket}`, labels, height: 160, format: compact, integer: true, series: [
      { name: 'input', values: r.total_series.map((m) => m.input_tokens) }, { name: 'output', values: r.total_series.map((m) => m.output_tokens) },
      { name: 'cached', values: r.total_series.map((m) => m.cache_read_tokens) }] })),
    h('ul', { class: 'legend' }, ...['input tokens', 'output tokens', 'cached input'].map((n, i) => h('li', { class: `series-${i}` }, h('span', { class: 'swatch', 'aria-hidden': 'true' }), n))));
  const top = r.group === 'none' ? null : section(`Top ${r.group === 'key' ? 'keys' : `${r.group}s`}`,
    chart(barChart({ title: `Cost by ${r.group}`, bars: groups.map((g) => ({ label: g.label, value: Number(g.totals.cost_usd), text: usd(g.totals.cost_usd), other: isOther(g) })) })),
    table([r.group, 'Requests', 'Errors', 'Input', 'Output', 'Cached', 'Cost', 'p50', 'p95'], groups.map((g) => [
      g.label, compact(g.totals.requests), pct(g.totals.error_rate), compact(g.totals.input_tokens), compact(g.totals.output_tokens),
      compact(g.totals.cache_read_tokens), usd(g.totals.cost_usd), ms(g.totals.latency_ms.p50), ms(g.totals.latency_ms.p95)]), { numeric: [1, 2, 3, 4, 5, 6, 7, 8] }));
  return [cards, legend, ...charts, ...(top ? [top] : []), latency];
}
