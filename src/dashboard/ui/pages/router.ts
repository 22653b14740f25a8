// Router: the router as a whole over a time window, from one GET /router call: routed requests and their
// share, the chosen models (share, real cost against the router's estimates, feedback on its quality
// signals), how often each constraint excluded candidates, fallbacks, exploration, cache affinity and
// the learned state versions used; routed requests, errors and cost over time, and per prompt kind the
// requests, errors, cost and the models chosen for it. The range lives in the URL. Below, the providers
// as the router sees them now (router-providers.ts), a dry run of a prompt (router-preview.ts), and for
// admins the stored learned-state versions, with a rollback and a reset (router-states.ts).
import { api, qs } from '../api.ts';
import type { RouterKind, RouterModelShare, RouterOverview } from '../api-types.ts';
import { barChart, lineChart } from '../charts.ts';
import { h, mount } from '../dom.ts';
import { bucketLabel, compact, dateTime, pct, timeZone, usd, usdTick } from '../format.ts';
import { feedbackText, kindModelsText, requestsLink } from '../router-text.ts';
import { navigate, readQuery, withQuery } from '../url-state.ts';
import { card, chart, errorBox, field, section, select, table } from '../widgets.ts';
import { RANGES, rangeOf } from './usage.ts';
import { routerPreviewSection } from './router-preview.ts';
import { routerProvidersSection } from './router-providers.ts';
import { routerStatesSection } from './router-states.ts';

/** The API query for the page's URL state. */
export function routerApiQuery(q: Record<string, string>, now = Date.now()): string {
  const r = q.from && q.to ? { from: q.from, to: q.to } : rangeOf(q.range ?? '7d', now);
  return qs({ ...r, tz: timeZone(), top: 10 });
}

const money = (x: number | null): string => (x === null ? '–' : usd(String(x)));
const quality = (x: number | null): string => (x === null ? '–' : x.toFixed(3));

function modelRow(m: RouterModelShare, q: Record<string, string>): Array<string | HTMLElement> {
  return [
    h('a', { href: requestsLink(m.model, q), title: `Routed requests served by ${m.model}` }, m.model),
    `${compact(m.requests)} · ${pct(m.share)}`, usd(m.cost_usd), usd(m.cost_per_request_usd), money(m.predicted_cost_usd), quality(m.predicted_quality),
    m.feedback.length ? h('span', null, ...m.feedback.map((f, i) => [i ? h('br') : null, feedbackText(f)])) : '–',
    `${compact(m.fallbacks)} / ${compact(m.explored)}`,
  ];
}

const legend = (names: string[]): HTMLElement =>
  h('ul', { class: 'legend', 'aria-label': 'Series' }, ...names.map((n, i) => h('li', { class: `series-${i}` }, h('span', { class: 'swatch', 'aria-hidden': 'true' }), n)));

/** Routed requests and errors, and their cost, per bucket (the Usage page's line charts). */
function overTime(r: RouterOverview): HTMLElement {
  const labels = r.buckets.map((b) => bucketLabel(b, r.bucket, r.tz));
  return section('Routed traffic over time',
    chart(lineChart({ title: `Routed requests and errors per ${r.bucket}`, labels, format: compact, integer: true, series: [
      { name: 'routed requests', values: r.series.map((p) => p.requests) }, { name: 'errors', values: r.series.map((p) => p.errors) }] })),
    legend(['routed requests', 'errors']),
    chart(lineChart({ title: `Cost of routed requests per ${r.bucket} (USD)`, labels, height: 160, format: (n) => usd(String(n)), tickFormat: usdTick, series: [
      { name: 'cost', values: r.series.map((p) => Number(p.cost_usd)) }] })));
}

function kindRow(k: RouterKind): string[] {
  return [k.kind, `${compact(k.requests)} · ${pct(k.share)}`, `${compact(k.errors)} · ${pct(k.error_rate)}`, usd(k.cost_usd), usd(k.cost_per_request_usd),
    compact(k.no_route), kindModelsText(k)];
}

function byKind(r: RouterOverview): HTMLElement {
  return section('By prompt kind',
    r.kinds.length ? chart(barChart({ title: 'Routed requests by prompt kind', bars: r.kinds.map((k) => ({ label: k.kind, value: k.requests, text: `${compact(k.requests)} · ${pct(k.share)}` })) })) : null,
    table(['Kind', 'Requests', 'Errors', 'Cost', 'Per request', 'No route', 'Chosen models'], r.kinds.map(kindRow),
      { numeric: [1, 2, 3, 4, 5], empty: 'No routed requests in this range.' }),
    h('p', { class: 'muted small' }, 'Kind: the task the router detected in the prompt. Chosen models: the three it chose most for the kind, with their share of its requests.'));
}

function render(r: RouterOverview, q: Record<string, string>): HTMLElement[] {
  const cards = h('div', { class: 'cards' },
    card('Routed requests', compact(r.routed), `${pct(r.routed_share)} of ${compact(r.requests)} requests`),
    card('Cost', usd(r.cost_usd), r.cost_per_request_usd ? `${usd(r.cost_per_request_usd)} per routed request` : undefined),
    card('Fallbacks', compact(r.fallbacks), `${pct(r.routed ? r.fallbacks / r.routed : null)} tried more than one target`),
    card('Explored', compact(r.explored), `${pct(r.routed ? r.explored / r.routed : null)} of routed requests`),
    card('Cache affinity', compact(r.affinity_chosen), `chosen of ${compact(r.affinity_known)} with a cached prefix`),
    card('No route', compact(r.no_route), `${compact(r.errors)} routed requests ended in an error`));
  const notes: Array<HTMLElement | null> = [
    r.routed === 0 ? h('p', { class: 'muted' }, 'No routed requests in this range (send requests with "model": "router").') : null,
  ];
  const bars = [...r.models.map((m) => ({ label: m.model, value: m.requests, text: `${compact(m.requests)} · ${pct(m.share)}` })),
    ...(r.other ? [{ label: `${r.other.models} more`, other: true, value: r.other.requests, text: `${compact(r.other.requests)} · ${pct(r.routed ? r.other.requests / r.routed : null)}` }] : [])];
  const models = section('Chosen models',
    bars.length ? chart(barChart({ title: 'Routed requests by chosen model', bars })) : null,
    table(['Model', 'Requests', 'Cost', 'Per request', 'Predicted', 'Quality', 'Feedback', 'Fallbacks / explored'],
      [...r.models.map((m) => modelRow(m, q)), ...(r.other ? [[`${r.other.models} more models`, `${compact(r.other.requests)} · ${pct(r.routed ? r.other.requests / r.routed : null)}`, usd(r.other.cost_usd), '', '', '', '', '']] : [])],
      { numeric: [1, 2, 3, 4, 5, 7], empty: 'No model was chosen in this range.' }),
    h('p', { class: 'muted small' }, 'Cost: what the requests cost as recorded, in all and per request. Predicted and Quality: the router\'s own estimates of cost per request and quality when it chose. ',
      r.quality_signals.length ? `Feedback: on the router's quality signals (${r.quality_signals.join(', ')}).` : 'Feedback: no quality signals are configured (router.quality_signals).'));
  const constraints = section('Constraints',
    r.constraints.length ? chart(barChart({ title: 'Decisions where each constraint excluded candidates', bars: r.constraints.map((c) => ({ label: c.constraint, value: c.decisions, text: `${compact(c.decisions)} · ${pct(c.share)}` })) })) : null,
    table(['Constraint', 'Decisions', 'Share of routed', 'Candidates excluded'], r.constraints.map((c) => [c.constraint, compact(c.decisions), pct(c.share), compact(c.candidates)]),
      { numeric: [1, 2, 3], empty: 'No constraint excluded a candidate in this range.' }));
  const versions = section('Learned state used',
    h('p', null, `${compact(r.state_version_count)} state version${r.state_version_count === 1 ? '' : 's'} used${r.state_versions.length < r.state_version_count ? `; the newest ${r.state_versions.length}` : ''}.`),
    table(['Version', 'Decisions', 'First used', 'Last used'], r.state_versions.map((s) => [String(s.version), compact(s.decisions), dateTime(s.first_at), dateTime(s.last_at)]),
      { numeric: [1], empty: 'No decisions in this range.' }));
  return [cards, ...notes.filter((x): x is HTMLElement => x !== null), overTime(r), models, byKind(r), constraints, versions];
}

export async function routerPage(root: HTMLElement, admin: boolean): Promise<void> {
  const q = readQuery();
  const range = select('range', RANGES, q.range ?? '7d');
  range.addEventListener('change', () => navigate(`/dashboard/router${withQuery(q, { range: range.value, from: null, to: null })}`));
  const filters = h('form', { class: 'filters', 'aria-label': 'Router filters', onsubmit: (e: Event) => e.preventDefault() }, field('Range', range));
  const body = h('div', { 'aria-live': 'polite' }, h('p', { class: 'loading' }, 'Loading the router overview…'));
  // The providers, the dry run and the learned states load on their own: an overview that fails to load leaves them reachable.
  mount(root, h('h1', null, 'Router'), filters, body, routerProvidersSection(), routerPreviewSection(), ...(admin ? [routerStatesSection()] : []));
  try {
    mount(body, ...render(await api.router(routerApiQuery(q)), q));
  } catch (e) {
    mount(body, errorBox(e));
  }
}
