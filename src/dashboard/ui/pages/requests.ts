// Request history: filters in the URL, keyset pages ("Older" continues from the cursor; a page that
// scanned its bounded window without filling up continues by itself a few times), search by id, and
// the live tail over one server-sent-event stream.
import { api, API, qs } from '../api.ts';
import type { RequestPage, RequestSummary, TailEvent } from '../api-types.ts';
import { h, mount } from '../dom.ts';
import { compact, dateTime, ms, usd } from '../format.ts';
import { navigate, readQuery, withQuery } from '../url-state.ts';
import { badge, errorBox, field, select, statusBadge, textCell } from '../widgets.ts';
import { RANGES, rangeOf } from './usage.ts';

const FILTERS: Array<[string, string, string]> = [
  ['model', 'Requested model', 'provider/model'], ['served', 'Served model', 'provider/model'], ['provider', 'Provider', 'any'],
  ['key', 'Key id', 'any'], ['route', 'Route', '/v1/...'], ['min_cost', 'Min cost', 'USD'], ['max_cost', 'Max cost', 'USD'],
];

export function requestsApiQuery(q: Record<string, string>, cursor?: string): string {
  const r = q.from && q.to ? { from: q.from, to: q.to } : q.range === 'all' ? {} : rangeOf(q.range ?? '24h');
  return qs({ ...r, model: q.model, served: q.served, provider: q.provider, key: q.key, route: q.route, status: q.status, stream: q.stream,
    min_cost: q.min_cost, max_cost: q.max_cost, feedback: q.feedback, partial: q.partial, routed: q.routed, user: q.user, cursor, limit: 50 });
}

export function requestRow(r: RequestSummary, fresh = false): HTMLTableRowElement {
  const href = `/dashboard/requests/${encodeURIComponent(r.id)}`;
  return h('tr', { class: fresh ? 'fresh' : null, 'data-id': r.id },
    h('td', null, h('a', { href }, dateTime(r.created_at))),
    textCell(r.key_name ?? r.key_id ?? '–'),
    textCell(r.requested_model, r.served_model && r.served_model !== r.requested_model ? h('div', { class: 'muted small' }, `→ ${r.served_model}`) : null),
    textCell(r.route),
    h('td', null, statusBadge(r.status), r.stream ? badge('stream', 'muted') : null, r.attempts > 1 ? badge(`${r.attempts} attempts`, 'warn') : null,
      r.partial ? badge('partial', 'warn') : null, r.routed ? badge('routed', 'muted') : null),
    h('td', { class: 'num' }, ms(r.latency_ms)),
    h('td', { class: 'num' }, `${compact(r.input_tokens)} / ${compact(r.output_tokens)}`),
    h('td', { class: 'num' }, usd(r.cost_usd)));
}

export async function requestsPage(root: HTMLElement, onCleanup: (f: () => void) => void): Promise<void> {
  const q = readQuery();
  const set = (patch: Record<string, string | null>): void => navigate(`/dashboard/requests${withQuery(q, patch)}`);
  const inputs = FILTERS.map(([name, label, ph]) => {
    const input = h('input', { type: 'text', name, value: q[name] ?? '', placeholder: ph });
    input.addEventListener('change', () => set({ [name]: input.value.trim() || null }));
    return field(label, input);
  });
  const sel = (name: string, label: string, options: Array<[string, string]>, def = '') => {
    const s = select(name, options, q[name] ?? def);
    s.addEventListener('change', () => set({ [name]: s.value || null }));
    return field(label, s);
  };
  const search = h('input', { type: 'search', name: 'id', placeholder: 'request id (UUID)' });
  const searchForm = h('form', { class: 'search', role: 'search', onsubmit: (e: Event) => { e.preventDefault(); if (search.value.trim()) navigate(`/dashboard/requests/${encodeURIComponent(search.value.trim())}`); } },
    field('Find by id', search), h('button', { type: 'submit', class: 'secondary' }, 'Open'));
  const tbody = h('tbody', null);
  const status = h('p', { class: 'muted', 'aria-live': 'polite' });
  const more = h('button', { type: 'button', class: 'secondary', hidden: true }, 'Older requests');
  const live = h('input', { type: 'checkbox', id: 'live-tail' });
  const liveState = h('span', { class: 'muted small', 'aria-live': 'polite' });
  const apiQ = requestsApiQuery(q);
  mount(root, h('h1', null, 'Requests'),
    h('form', { class: 'filters', 'aria-label': 'Request filters', onsubmit: (e: Event) => e.preventDefault() },
      sel('range', 'Range', [...RANGES, ['all', 'All time']], '24h'),
      sel('status', 'Status', [['', 'Any'], ['ok', 'Succeeded'], ['error', 'Failed'], ['429', '429'], ['502', '502']]),
      sel('stream', 'Stream', [['', 'Any'], ['true', 'Streamed'], ['false', 'Not streamed']]),
      sel('feedback', 'Feedback', [['', 'Any'], ['true', 'Has feedback'], ['false', 'No feedback']]),
      sel('partial', 'Finished', [['', 'Any'], ['true', 'Partial (cut short)'], ['false', 'Complete']]),
      sel('routed', 'Router', [['', 'Any'], ['true', 'Router decisions'], ['false', 'No router decision']]),
      ...inputs,
      h('div', { class: 'field export' }, h('span', { class: 'label' }, 'Export'),
        h('div', null, h('a', { href: `${API}/requests/export${apiQ}&format=csv`, download: '' }, 'CSV'), ' · ', h('a', { href: `${API}/requests/export${apiQ}&format=jsonl`, download: '' }, 'JSONL')))),
    h('div', { class: 'toolbar' }, searchForm, h('label', { class: 'toggle', for: 'live-tail' }, live, ' Live tail'), liveState),
    h('div', { class: 'table-wrap' }, h('table', { class: 'requests' },
      h('caption', { class: 'visually-hidden' }, 'Requests, newest first'),
      h('thead', null, h('tr', null, ...['Time', 'Key', 'Model', 'Route', 'Status', 'Latency', 'Tokens in / out', 'Cost'].map((c, i) => h('th', { scope: 'col', class: i >= 5 ? 'num' : null }, c)))),
      tbody)),
    status, more);

  let cursor: string | null = null;
  const load = async (auto: number): Promise<void> => {
    status.textContent = 'Loading…';
    let page: RequestPage;
    try { page = await api.requests(requestsApiQuery(q, cursor ?? undefined)); } catch (e) { status.replaceChildren(errorBox(e)); return; }
    for (const r of page.data) tbody.appendChild(requestRow(r));
    cursor = page.next_cursor;
    more.hidden = cursor === null;
    status.textContent = tbody.children.length === 0 && cursor === null ? 'No requests match these filters.'
      : page.scanned_to ? `Searched back to ${dateTime(page.scanned_to)}.` : '';
    if (page.scanned_to && page.data.length < 50 && auto > 0) await load(auto - 1);
  };
  more.addEventListener('click', () => void load(3));
  await load(3);

  let source: EventSource | null = null;
  const stop = (): void => { source?.close(); source = null; liveState.textContent = ''; };
  live.addEventListener('change', () => {
    if (!live.checked) { stop(); return; }
    const es = new EventSource(`${API}/tail`);
    source = es;
    liveState.textContent = 'Connecting…';
    es.onopen = () => { liveState.textContent = 'Live: new requests appear at the top.'; };
    es.onerror = () => {
      if (es.readyState !== EventSource.CLOSED) { liveState.textContent = 'Reconnecting…'; return; }
      // The server refused the stream and the browser gives up: a 401 once the session ended (the check
      // below then finds it signed out and leads to sign-in), else say so rather than 'Reconnecting…' for ever.
      stop();
      live.checked = false;
      api.session().then((s) => { if (s.signed_in) liveState.textContent = 'Live tail stopped: the server refused the stream. Turn it on again to retry.'; }, (e: unknown) => {
        liveState.textContent = `Live tail stopped: ${e instanceof Error ? e.message : String(e)}`;
      });
    };
    es.onmessage = (ev: MessageEvent<string>) => {
      const data = JSON.parse(ev.data) as { events: TailEvent[]; dropped: number };
      for (const r of data.events) { if (!tbody.querySelector(`tr[data-id="${CSS.escape(r.id)}"]`)) tbody.insertBefore(requestRow(r, true), tbody.firstChild); }
      while (tbody.children.length > 500) tbody.lastElementChild?.remove();
      if (data.dropped) liveState.textContent = `Live: ${data.dropped} requests skipped (too many at once).`;
    };
  });
  onCleanup(stop);
}
