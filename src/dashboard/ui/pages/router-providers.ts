// The Router page's "Providers now": each configured provider as the answering replica's router sees it
// at this moment (GET /router/providers): whether attempts skip it (ejected after failures in a row, and
// until when), its failures in a row, and the latency and error rate measured over its recent attempts,
// which policies read as candidate.latency_ms and error_rate. Those with something to say come first.
import { api } from '../api.ts';
import type { RouterProviderNow } from '../api-types.ts';
import { h, mount } from '../dom.ts';
import { dateTime, ms, pct } from '../format.ts';
import { badge, errorBox, section, table } from '../widgets.ts';

function health(p: RouterProviderNow): HTMLElement {
  if (p.ejected) return h('span', null, badge('ejected', 'bad'), ` until ${dateTime(p.ejected_until)}`);
  if (p.consecutive_failures > 0) return h('span', null, badge(`${p.consecutive_failures} failed in a row`, 'warn'));
  if (p.latency_ms === null && p.error_rate === 0) return h('span', { class: 'muted' }, 'no attempts yet');
  return badge('ok', 'ok');
}

export function routerProvidersSection(): HTMLElement {
  const list = h('div', null, h('p', { class: 'loading' }, 'Loading the providers…'));
  void api.routerProviders().then((r) => {
    mount(list, h('p', { class: 'muted small' }, `As of ${dateTime(r.as_of)}, on the replica that answered.`),
      table(['Provider', 'Health', 'Latency', 'Error rate'], r.data.map((p) => [p.provider, health(p), ms(p.latency_ms), pct(p.error_rate)]),
        { caption: 'Providers as the router sees them now', numeric: [2, 3], empty: 'No provider is configured.' }));
  }, (e: unknown) => mount(list, errorBox(e)));
  return section('Providers now',
    h('p', { class: 'muted small' }, 'An ejected provider is skipped by every attempt until the time shown (failures in a row eject it, for longer each time: upstream.ejection in gateway.yaml); latency and error rate are measured over about its last 20 attempts, and policies can use them (candidate.latency_ms, candidate.error_rate).'),
    list);
}
