// API keys: create (the secret shown once, with copy), edit, rotate (old secret valid for a grace period),
// revoke; per key the spend against its budget with a burn-down forecast, requests and errors. The list
// stays current while on screen (another admin's changes show), keeping the reader's place in it.
import { api } from '../api.ts';
import type { KeyView, SessionView, UserView } from '../api-types.ts';
import { changedFields, keyInput } from '../key-input.ts';
import { h, mount } from '../dom.ts';
import { whileVisible } from '../live.ts';
import { compact, dateTime, pct, relative, timeUntil, usd } from '../format.ts';
import { badge, errorBox, errorText, field, secretBox, section, select, table } from '../widgets.ts';

const PAGE = 100;
const PERIODS: Array<[string, string]> = [['month', 'per month'], ['week', 'per week'], ['day', 'per day'], ['total', 'in total']];

/** `onFailed`: the change was refused (shown in the form); the list loads again to show why (another admin's revoke...). */
function keyForm(s: SessionView, users: UserView[], k: KeyView | null, onDone: (msg: HTMLElement | null) => void, onFailed: () => void): HTMLFormElement {
  const admin = s.user.role === 'admin';
  const inp = (name: string, type: string, value: string, extra: Record<string, string | number> = {}) => h('input', { name, type, value, ...extra });
  const local = (iso: string | null): string => (iso ? new Date(Date.parse(iso) - new Date().getTimezoneOffset() * 60_000).toISOString().slice(0, 16) : '');
  const status = h('div', { 'aria-live': 'polite' });
  const form = h('form', { class: 'key-form grid-form', 'aria-label': k ? `Edit key ${k.name}` : 'Create a key' },
    field('Name', inp('name', 'text', k?.name ?? '', { required: 'true', maxlength: 200 })),
    field('Expires', inp('expires_at', 'datetime-local', local(k?.expires_at ?? null)), 'empty: never'),
    admin ? [
      field('Allowed models', inp('allowed_models', 'text', k?.allowed_models.join(', ') ?? '', { placeholder: 'all, or openai/*, anthropic/claude-*' })),
      field('Budget (USD)', inp('budget_usd', 'text', k?.budget_usd ?? '', { inputmode: 'decimal', placeholder: 'none' })),
      field('Budget period', select('budget_period', PERIODS, k?.budget_period ?? 'month')),
      field('Requests per minute', inp('rpm_limit', 'number', k?.rpm_limit === null || !k ? '' : String(k.rpm_limit), { min: 1, placeholder: 'no limit' })),
      field('Tokens per minute', inp('tpm_limit', 'number', k?.tpm_limit === null || !k ? '' : String(k.tpm_limit), { min: 1, placeholder: 'no limit' })),
      field('Owner', select('owner_id', [['', 'No owner (admins only)'], ...users.map((u): [string, string] => [u.id, u.email])], k?.owner?.id ?? '')),
    ] : null,
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, k ? 'Save changes' : 'Create key'),
      k ? h('button', { type: 'button', class: 'secondary', onclick: () => onDone(null) }, 'Cancel') : null),
    status);
  const values = (): Record<string, string> => Object.fromEntries([...new FormData(form)].map(([key, val]) => [key, String(val)]));
  const opened = keyInput(values(), k !== null, admin);
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const body = keyInput(values(), k !== null, admin);
    (k ? api.updateKey(k.id, changedFields(opened, body)).then(() => onDone(null))
      : api.createKey(body).then((c) => onDone(secretBox(`Key "${c.record.name}" created`, c.key, 'Copy it now: it is shown only once. Use it as the Bearer token (OpenAI SDKs) or x-api-key (Anthropic SDKs).'))))
      .catch((err: unknown) => { status.replaceChildren(errorBox(err)); onFailed(); });
  });
  return form;
}

function spend(k: KeyView): HTMLElement {
  const st = k.stats;
  if (k.budget_usd === null) return h('div', null, usd(st.period_spend_usd), h('div', { class: 'muted small' }, 'this month · no budget'));
  const used = st.budget_used_ratio ?? 0;
  const ratio = Math.min(1, used);
  // A budget already spent has no 'runs out' time ahead (the API gives now): say it is used up, and by how much it was passed.
  const over = Number(st.period_spend_usd) - Number(k.budget_usd);
  return h('div', null,
    h('div', null, `${usd(st.period_spend_usd)} of ${usd(k.budget_usd)} ${k.budget_period === 'total' ? 'in total' : `this ${k.budget_period}`}`),
    h('progress', { max: 1, value: ratio, 'aria-label': `${pct(used, 0)} of the budget used` }),
    used >= 1 ? h('div', { class: 'small' }, badge('budget used up', 'bad'), over > 0 ? `${usd(String(over))} over` : null)
      : h('div', { class: 'muted small' }, forecast(k)));
}

/**
 * When the budget runs out at the last 7 days' rate. A day, week or month budget starts again at its
 * period's end: a forecast past that end means it lasts the period (a $500 monthly budget read "runs
 * out in about 3.6 years", as if the spend never started again).
 */
function forecast(k: KeyView): string {
  const st = k.stats;
  if (!st.runs_out_at) return 'no spend in the last 7 days';
  if (st.period_end && Date.parse(st.runs_out_at) >= Date.parse(st.period_end)) return `lasts this ${k.budget_period} at the last 7 days' rate`;
  return `runs out ${timeUntil(st.runs_out_at)} at the last 7 days' rate`;
}

/** The list loads again this often while the tab is visible, and when the tab or window comes back (src/dashboard/ui/live.ts). */
const POLL_MS = 30_000;
/** The most keys one list call answers (GET /keys?limit=). */
const MAX_PAGE = 1000;

/** Where the reader is in the list: the first row on screen and its place, the focused control, the table's sideways scroll. */
type Place = { keyId: string | null; top: number; focus: string | null; left: number };

function placeIn(holder: HTMLElement): Place {
  const rows = [...holder.querySelectorAll<HTMLElement>('[data-key-id]')];
  const first = rows.find((r) => r.getBoundingClientRect().bottom > 0) ?? null;
  const active = document.activeElement instanceof HTMLElement && holder.contains(document.activeElement) ? document.activeElement : null;
  return {
    keyId: first?.dataset.keyId ?? null, top: first?.getBoundingClientRect().top ?? 0,
    focus: active?.dataset.action && active.dataset.for ? `[data-action="${active.dataset.action}"][data-for="${CSS.escape(active.dataset.for)}"]` : null,
    left: holder.querySelector('.table-wrap')?.scrollLeft ?? 0,
  };
}

function restorePlace(holder: HTMLElement, p: Place): void {
  const row = p.keyId === null ? null : holder.querySelector<HTMLElement>(`[data-key-id="${CSS.escape(p.keyId)}"]`);
  if (row) window.scrollBy(0, row.getBoundingClientRect().top - p.top);
  const wrap = holder.querySelector('.table-wrap');
  if (wrap) wrap.scrollLeft = p.left;
  if (p.focus) holder.querySelector<HTMLElement>(p.focus)?.focus({ preventScroll: true });
}

export async function keysPage(root: HTMLElement, s: SessionView, onCleanup: (f: () => void) => void): Promise<void> {
  // Registered before the first await: a page left while it loads never starts its polling.
  let left = false;
  let stopPolling = (): void => {};
  onCleanup(() => { left = true; stopPolling(); });
  const notice = h('div', { 'aria-live': 'polite' });
  const list = h('div', null, h('p', { class: 'loading' }, 'Loading keys…'));
  const holder = h('div');
  let users: UserView[] = [];
  // Pages of PAGE keys: a gateway with 10,000 keys lists (and reads stats for) the newest first, more on demand.
  let keys: KeyView[] = [];
  let cursor: string | null = null;
  /** The keys the table shows (JSON), null before the first load. */
  let shown: string | null = null;
  // Every load takes a number and only the newest one's answer is shown: one that started earlier and
  // ends later would put back what it read.
  let seq = 0;
  let paging = false;
  const more = h('button', { type: 'button', class: 'secondary', hidden: true }, 'More keys');
  const moreState = h('span', { class: 'muted small', 'aria-live': 'polite' });
  const loadState = h('span', { class: 'muted small', 'aria-live': 'polite', 'data-testid': 'keys-load-state' });
  more.addEventListener('click', () => {
    const mine = ++seq;
    paging = true;
    more.disabled = true;
    moreState.textContent = 'Loading…';
    api.keys({ limit: PAGE, cursor }).then((page) => {
      moreState.textContent = '';
      if (mine !== seq) return;
      keys = [...keys, ...page.data];
      cursor = page.next_cursor;
      render();
    }, (e: unknown) => { moreState.replaceChildren(errorBox(e)); }).finally(() => { paging = false; more.disabled = false; });
  });
  /** The newest `n` keys (one page at least): as far down as the reader has paged, in as few calls as the API allows. */
  const newest = async (n: number): Promise<{ data: KeyView[]; next: string | null }> => {
    const data: KeyView[] = [];
    let next: string | null = null;
    do {
      const page = await api.keys({ limit: Math.min(MAX_PAGE, Math.max(PAGE, n - data.length)), cursor: next });
      data.push(...page.data);
      next = page.next_cursor;
    } while (next !== null && data.length < n);
    return { data, next };
  };
  /** Loads the list again as the server has it, as far as it was paged; the page stays as it is where nothing changed. */
  const reload = async (): Promise<void> => {
    const mine = ++seq;
    try {
      const got = await newest(keys.length);
      if (mine !== seq) return;
      keys = got.data;
      cursor = got.next;
      loadState.textContent = '';
      render();
    } catch (e) {
      if (mine !== seq) return;
      if (shown === null) mount(list, errorBox(e));
      else loadState.textContent = `The list could not be loaded again (${errorText(e)}): it shows the keys as of ${dateTime(new Date().toISOString())}.`;
    }
  };
  const refresh = (msg: HTMLElement | null = null): Promise<void> => {
    notice.replaceChildren(...(msg ? [msg] : []));
    return reload();
  };
  /** A change refused (most often a row another admin changed first: 409): the refusal stays shown, and the list shows the server's state. */
  const refused = (e: unknown): void => { notice.replaceChildren(errorBox(e)); void reload(); };
  const render = (): void => {
    more.hidden = cursor === null;
    const next = table(['Key', 'Status', 'Owner', 'Spend', 'Last 24 h', 'Limits', 'Last used', ''], keys.map((k) => [
      h('div', { 'data-key-id': k.id }, h('strong', null, k.name), h('div', null, h('code', { class: 'small' }, `${k.prefix}…`)),
        k.previous_secret_valid_until ? h('div', { class: 'muted small' }, `previous secret valid until ${dateTime(k.previous_secret_valid_until)}`) : null),
      badge(k.status, k.status === 'active' ? 'ok' : 'muted'),
      k.owner?.email ?? '–',
      spend(k),
      h('div', null, `${compact(k.stats.requests_24h)} requests`, h('div', { class: 'muted small' }, `${compact(k.stats.errors_24h)} errors · ${usd(k.stats.spend_24h_usd)}`)),
      h('div', { class: 'small' }, `rpm ${k.rpm_limit ?? '∞'} · tpm ${k.tpm_limit ?? '∞'}`, h('div', { class: 'muted' }, k.allowed_models.length ? k.allowed_models.join(', ') : 'all models'),
        k.expires_at ? h('div', { class: 'muted' }, `expires ${dateTime(k.expires_at)}`) : null),
      relative(k.last_used_at),
      k.status === 'revoked' ? '' : h('div', { class: 'row-actions' },
        h('button', { type: 'button', class: 'secondary small', 'aria-label': `Edit ${k.name}`, 'data-action': 'edit', 'data-for': k.id, onclick: () => {
          // Saved or cancelled, the focus goes back to this row's Edit (the form is gone: it fell to the body).
          const back = (): void => { holder.querySelector<HTMLElement>(`[data-action="edit"][data-for="${CSS.escape(k.id)}"]`)?.focus(); };
          notice.replaceChildren(section(`Edit ${k.name}`, keyForm(s, users, k, (m) => void refresh(m).then(back), () => void reload())));
          // The form opens above the list, out of sight from a row further down: the focus goes to its first field.
          notice.querySelector<HTMLInputElement>('input[name=name]')?.focus();
        } }, 'Edit'),
        h('button', { type: 'button', class: 'secondary small', 'aria-label': `Rotate ${k.name}`, 'data-action': 'rotate', 'data-for': k.id, onclick: () => {
          if (!confirm(`Rotate "${k.name}"? A new secret is issued; the current one keeps working for 24 hours.`)) return;
          api.rotateKey(k.id, 24).then((c) => refresh(secretBox(`New secret for "${k.name}"`, c.key, `The previous secret works until ${dateTime(c.previous_secret_valid_until)}.`)), refused);
        } }, 'Rotate'),
        h('button', { type: 'button', class: 'danger small', 'aria-label': `Revoke ${k.name}`, 'data-action': 'revoke', 'data-for': k.id, onclick: () => {
          if (!confirm(`Revoke "${k.name}"? Requests with it fail at once.`)) return;
          api.revokeKey(k.id).then(() => refresh(h('div', { class: 'notice', role: 'status' }, `Key "${k.name}" revoked.`)), refused);
        } }, 'Revoke')),
    ]), { empty: 'No keys yet: create one above.' });
    // Nothing changed (the data, nor the times shown relative to now): the table stays as it is, with
    // the reader's selection, focus and scroll.
    const data = JSON.stringify(keys);
    if (shown !== null && data === shown && next.outerHTML === holder.firstElementChild?.outerHTML) return;
    const place = placeIn(holder);
    if (shown === null) mount(list, holder, h('div', { class: 'toolbar' }, more, moreState, loadState));
    shown = data;
    mount(holder, next);
    restorePlace(holder, place);
  };
  if (s.user.role === 'admin') users = (await api.users().catch(() => ({ data: [] as UserView[] }))).data;
  mount(root, h('h1', null, 'API keys'), section('Create a key', keyForm(s, users, null, (m) => void refresh(m), () => {}),
    s.user.role === 'member' ? h('p', { class: 'muted small' }, 'Budgets, rate limits and allowed models are set by an admin.') : null), notice, list);
  await reload();
  // Another admin's revoke, rotation or edit shows without reloading the page; a "More keys" load in
  // progress is left to finish (the next poll comes after it).
  if (!left) stopPolling = whileVisible(() => (paging ? Promise.resolve() : reload()), POLL_MS);
}
