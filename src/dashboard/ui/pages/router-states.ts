// The Router page's learned-state versions, for admins (GET /router/states): each stored version with
// its outcomes, size and how it came to be, the one this replica routes with marked; a rollback to an
// earlier version or a reset to the priors (POST /router/states), confirmed first, with an optional
// reason kept with the new version. Either stores a new version every replica adopts within seconds.
import { api } from '../api.ts';
import type { RouterStoredState } from '../api-types.ts';
import { h, mount } from '../dom.ts';
import { compact, dateTime } from '../format.ts';
import { badge, errorBox, field, section, table } from '../widgets.ts';

const SHOWN = 20;

/** How a version came to be, as the command line says it. */
export function originText(s: RouterStoredState): string {
  const o = s.origin;
  if (!o) return 'trained';
  const what = o.kind === 'reset' ? 'reset to the priors' : `rollback to v${o.from_version}`;
  return `${what} by ${o.by}${o.reason ? `: ${o.reason}` : ''}`;
}

const size = (bytes: number): string => (bytes >= 1_048_576 ? `${(bytes / 1_048_576).toFixed(1)} MB` : `${Math.ceil(bytes / 1024)} KB`);

const wide = (el: HTMLElement): HTMLElement => { el.classList.add('wide'); return el; };

const EFFECT = 'A new version is stored with that learning; every replica routes with it within seconds. Feedback given until now is not learned again; new feedback trains as before.';

export function routerStatesSection(): HTMLElement {
  const notice = h('div', { 'aria-live': 'polite' });
  const list = h('div', null, h('p', { class: 'loading' }, 'Loading the learned states…'));
  const reason = h('input', { type: 'text', name: 'reason', maxlength: 500, placeholder: 'e.g. inverted verdicts from key ci-bot' });
  const restore = (version: number | null, busy: HTMLButtonElement): void => {
    const what = version === null ? 'Reset the router to its priors (forget everything feedback taught)?' : `Roll the router back to what version ${version} had learned?`;
    if (!confirm(`${what}\n\n${EFFECT}`)) return;
    busy.disabled = true;
    api.restoreRouterState(version, reason.value.trim()).then((r) => {
      notice.replaceChildren(h('div', { class: 'notice success', role: 'status' }, `Stored v${r.state.version}: ${originText(r.state)}. This replica routes with v${r.serving_version ?? '–'}.`));
      reason.value = '';
      return refresh();
    }, (e: unknown) => { busy.disabled = false; notice.replaceChildren(errorBox(e)); });
  };
  const resetButton = h('button', { type: 'button', class: 'secondary', onclick: () => restore(null, resetButton) }, 'Reset to priors');
  const refresh = async (): Promise<void> => {
    let r;
    try { r = await api.routerStates(SHOWN); } catch (e) { mount(list, errorBox(e)); return; }
    const newest = r.data[0]?.version;
    mount(list, table(['Version', 'Created', 'Outcomes', 'Size', 'How', ''], r.data.map((s) => {
      const button = h('button', { type: 'button', class: 'secondary small', 'aria-label': `Roll back to this: version ${s.version}`, onclick: () => restore(s.version, button) }, 'Roll back to this');
      return [
        h('span', null, `v${s.version}`, s.version === r.serving_version ? [' ', badge('routing with it', 'ok')] : null),
        dateTime(s.created_at), compact(s.outcomes), size(s.bytes), originText(s),
        s.version === newest ? h('span', { class: 'muted small' }, 'newest') : button,
      ];
    }), { caption: 'Stored learned-state versions, newest first', numeric: [2, 3], empty: 'No learned state is stored yet: the router routes on its benchmark priors.' }));
  };
  void refresh();
  return section('Undo learning',
    h('p', { class: 'muted small' }, `The router's learned states, newest first (the ${SHOWN} newest; retention keeps the newest and the last of each day). Roll back when feedback taught it something wrong, or reset to route on the benchmark priors again. ${EFFECT}`),
    h('form', { class: 'grid-form', 'aria-label': 'Undo learning', onsubmit: (e: Event) => e.preventDefault() },
      wide(field('Reason (kept with the new version)', reason)), h('div', { class: 'actions' }, resetButton)),
    notice, list);
}
