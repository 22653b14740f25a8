// API keys: create (the secret shown once, with copy), edit, rotate (old secret valid for a grace period),
// revoke; per key the spend against its budget with a burn-down forecast, requests and errors.
import { api } from '../api.ts';
import type { KeyView, SessionView, UserView } from '../api-types.ts';
import { changedFields, keyInput } from '../key-input.ts';
import { h, mount } from '../dom.ts';
import { compact, dateTime, pct, relative, usd } from '../format.ts';
import { badge, errorBox, field, secretBox, section, select, table } from '../widgets.ts';

const PAGE = 100;
const PERIODS: Array<[string, string]> = [['month', 'per month'], ['week', 'per week'], ['day', 'per day'], ['total', 'in total']];

function keyForm(s: SessionView, users: UserView[], k: KeyView | null, onDone: (msg: HTMLElement | null) => void): HTMLFormElement {
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
      .catch((err: unknown) => status.replaceChildren(errorBox(err)));
  });
  return form;
}

function spend(k: KeyView): HTMLElement {
  const st = k.stats;
  if (k.budget_usd === null) return h('div', null, usd(st.period_spend_usd), h('div', { class: 'muted small' }, 'this month · no budget'));
  const ratio = Math.min(1, st.budget_used_ratio ?? 0);
  return h('div', null,
    h('div', null, `${usd(st.period_spend_usd)} of ${usd(k.budget_usd)} ${k.budget_period === 'total' ? 'in total' : `this ${k.budget_period}`}`),
    h('progress', { max: 1, value: ratio, 'aria-label': `${pct(ratio, 0)} of the budget used` }),
    h('div', { class: 'muted small' }, st.runs_out_at ? `runs out ${relative(st.runs_out_at)} at the last 7 days' rate` : 'no spend in the last 7 days'));
}

export async function keysPage(root: HTMLElement, s: SessionView): Promise<void> {
  const notice = h('div', { 'aria-live': 'polite' });
  const list = h('div', null, h('p', { class: 'loading' }, 'Loading keys…'));
  let users: UserView[] = [];
  // Pages of PAGE keys: a gateway with 10,000 keys lists (and reads stats for) the newest first, more on demand.
  let keys: KeyView[] = [];
  let cursor: string | null = null;
  const more = h('button', { type: 'button', class: 'secondary', hidden: true }, 'More keys');
  const moreState = h('span', { class: 'muted small', 'aria-live': 'polite' });
  const fetchPage = async (from: string | null): Promise<void> => {
    const page = await api.keys({ limit: PAGE, cursor: from });
    keys = from === null ? page.data : [...keys, ...page.data];
    cursor = page.next_cursor;
  };
  more.addEventListener('click', () => {
    more.disabled = true;
    moreState.textContent = 'Loading…';
    fetchPage(cursor).then(() => { moreState.textContent = ''; render(); }, (e: unknown) => { moreState.replaceChildren(errorBox(e)); }).finally(() => { more.disabled = false; });
  });
  const refresh = async (msg: HTMLElement | null = null): Promise<void> => {
    notice.replaceChildren(...(msg ? [msg] : []));
    try { await fetchPage(null); } catch (e) { mount(list, errorBox(e)); return; }
    render();
  };
  const render = (): void => {
    more.hidden = cursor === null;
    mount(list, table(['Key', 'Status', 'Owner', 'Spend', 'Last 24 h', 'Limits', 'Last used', ''], keys.map((k) => [
      h('div', null, h('strong', null, k.name), h('div', null, h('code', { class: 'small' }, `${k.prefix}…`)),
        k.previous_secret_valid_until ? h('div', { class: 'muted small' }, `previous secret valid until ${dateTime(k.previous_secret_valid_until)}`) : null),
      badge(k.status, k.status === 'active' ? 'ok' : 'muted'),
      k.owner?.email ?? '–',
      spend(k),
      h('div', null, `${compact(k.stats.requests_24h)} requests`, h('div', { class: 'muted small' }, `${compact(k.stats.errors_24h)} errors · ${usd(k.stats.spend_24h_usd)}`)),
      h('div', { class: 'small' }, `rpm ${k.rpm_limit ?? '∞'} · tpm ${k.tpm_limit ?? '∞'}`, h('div', { class: 'muted' }, k.allowed_models.length ? k.allowed_models.join(', ') : 'all models'),
        k.expires_at ? h('div', { class: 'muted' }, `expires ${dateTime(k.expires_at)}`) : null),
      relative(k.last_used_at),
      k.status === 'revoked' ? '' : h('div', { class: 'row-actions' },
        h('button', { type: 'button', class: 'secondary small', 'aria-label': `Edit ${k.name}`, onclick: () => { notice.replaceChildren(section(`Edit ${k.name}`, keyForm(s, users, k, (m) => void refresh(m)))); } }, 'Edit'),
        h('button', { type: 'button', class: 'secondary small', 'aria-label': `Rotate ${k.name}`, onclick: () => {
          if (!confirm(`Rotate "${k.name}"? A new secret is issued; the current one keeps working for 24 hours.`)) return;
          api.rotateKey(k.id, 24).then((c) => refresh(secretBox(`New secret for "${k.name}"`, c.key, `The previous secret works until ${dateTime(c.previous_secret_valid_until)}.`)), (e: unknown) => notice.replaceChildren(errorBox(e)));
        } }, 'Rotate'),
        h('button', { type: 'button', class: 'danger small', 'aria-label': `Revoke ${k.name}`, onclick: () => {
          if (!confirm(`Revoke "${k.name}"? Requests with it fail at once.`)) return;
          api.revokeKey(k.id).then(() => refresh(h('div', { class: 'notice', role: 'status' }, `Key "${k.name}" revoked.`)), (e: unknown) => notice.replaceChildren(errorBox(e)));
        } }, 'Revoke')),
    ]), { empty: 'No keys yet: create one above.' }), h('div', { class: 'toolbar' }, more, moreState));
  };
  if (s.user.role === 'admin') users = (await api.users().catch(() => ({ data: [] as UserView[] }))).data;
  mount(root, h('h1', null, 'API keys'), section('Create a key', keyForm(s, users, null, (m) => void refresh(m)),
    s.user.role === 'member' ? h('p', { class: 'muted small' }, 'Budgets, rate limits and allowed models are set by an admin.') : null), notice, list);
  await refresh();
}
