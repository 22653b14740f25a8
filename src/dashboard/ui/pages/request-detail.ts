// One request from one GET /requests/:id: requested vs served model, the attempts as a waterfall, time
// to first token, the cost by token kind and price, bodies as logged, feedback and the router's decision.
import { api } from '../api.ts';
import type { RequestDetail } from '../api-types.ts';
import { barChart } from '../charts.ts';
import { h, mount } from '../dom.ts';
import { compact, dateTime, ms, usd } from '../format.ts';
import { badge, chart, errorBox, section, statusBadge, table, textBlock } from '../widgets.ts';
import { routerDecisionSection } from './router-decision.ts';

export async function requestDetailPage(root: HTMLElement, id: string): Promise<void> {
  mount(root, h('p', { class: 'loading' }, 'Loading request…'));
  let r: RequestDetail;
  try { r = await api.request(id); } catch (e) { mount(root, h('h1', null, 'Request'), errorBox(e), h('a', { href: '/dashboard/requests' }, 'Back to requests')); return; }
  const dl = (pairs: Array<[string, Node | string]>) => h('dl', { class: 'facts' }, ...pairs.flatMap(([k, val]) => [h('dt', null, k), h('dd', null, val)]));
  const target = (a: { provider: string; model: string }): string => (a.model.startsWith(`${a.provider}/`) ? a.model : `${a.provider}/${a.model}`);
  let offset = 0;
  const offsets = r.attempts_detail.map((a) => { const o = offset; offset += a.latency_ms; return o; });
  mount(root,
    h('p', null, h('a', { href: '/dashboard/requests' }, '← Requests')),
    h('h1', null, 'Request ', h('code', null, r.id)),
    h('div', { class: 'cols' },
      section('Summary', dl([
        ['Time', dateTime(r.created_at)], ['Status', h('span', null, statusBadge(r.status), r.error_code ? ` ${r.error_code}` : '', r.partial ? badge('partial', 'warn') : '',
          r.partial ? h('div', { class: 'muted small', 'data-testid': 'partial-note' }, 'The answer did not finish (client hang-up, upstream cut or error, timeout): billed for the tokens it consumed.') : '')],
        ['Requested model', r.requested_model], ['Served model', r.served_model ?? '– (no answer)'], ['Provider', r.provider ?? '–'],
        ['Route', `${r.route} (${r.client_format})`], ['Key', r.key_name ? `${r.key_name} (${r.key_id})` : r.key_id ?? '–'], ['Owner', r.key_owner ?? '–'],
        ['Stream', r.stream ? 'yes' : 'no'], ['Latency', ms(r.latency_ms)], ['Time to first token', ms(r.ttft_ms)], ['Finish reason', r.finish_reason ?? '–'],
        ['Client', r.client_ip ?? '–'],
      ])),
      section('Cost', dl([['Total', usd(r.cost_usd)], ['Tokens', `${compact(r.input_tokens)} in · ${compact(r.output_tokens)} out · ${compact(r.cache_read_tokens)} cache read · ${compact(r.cache_write_tokens)} cache write · ${compact(r.reasoning_tokens)} reasoning`]]),
        r.cost_breakdown
          ? table(['Kind', 'Tokens', 'Price per 1M', 'Cost'], r.cost_breakdown.map((c) => [c.kind, compact(c.tokens), usd(c.price_per_million_usd), usd(c.cost_usd)]), { numeric: [1, 2, 3] })
          : h('p', { class: 'muted' }, 'The served model is not in the current catalog: no breakdown.'),
        r.cost_breakdown_matches === false ? h('p', { class: 'muted small' }, 'At today\'s prices the lines differ from the stored cost: prices changed since, or the provider billed extra kinds.') : null)),
    section('Attempts', r.attempts_detail.length === 0 ? h('p', { class: 'muted' }, 'No upstream attempt (refused before dispatch).') : [
      chart(barChart({ title: 'Attempts in order (latency)', offsets, format: ms, bars: r.attempts_detail.map((a, i) => ({ label: `${i + 1}. ${target(a)}`, value: a.latency_ms, text: `${a.status ?? 'no status'} · ${ms(a.latency_ms)}` })) })),
      table(['#', 'Target', 'Status', 'Latency', 'Error'], r.attempts_detail.map((a, i) => [String(i + 1), target(a), a.status === null ? '–' : statusBadge(a.status), ms(a.latency_ms), a.error ?? '']), { numeric: [3] }),
    ]),
    r.routing ? routerDecisionSection(r.routing) : null,
    section('Feedback', table(['Metric', 'Type', 'Value', 'Reason', 'Time'], r.feedback.map((f) => [f.metric, f.type, f.value, f.reason ?? '', dateTime(f.created_at)]), { empty: 'No feedback for this request.' })),
    h('div', { class: 'cols' },
      section('Request body', textBlock(r.request_body, 'Not kept (storage.log_bodies).')),
      section('Response body', textBlock(r.response_body, r.stream ? 'Not kept (storage.log_bodies: full keeps streamed answers too).' : 'Not kept (storage.log_bodies).'))),
    r.metadata || r.extra ? section('Metadata', textBlock(JSON.stringify({ metadata: r.metadata, extra: r.extra }), '')) : null);
}
