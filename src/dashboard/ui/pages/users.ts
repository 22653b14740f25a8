// Users (admins): create members or admins (a generated password shown once), change roles, disable,
// reset passwords. And every user's own account: change the password.
import { api } from '../api.ts';
import type { SessionView, UserView } from '../api-types.ts';
import { h, mount } from '../dom.ts';
import { dateTime } from '../format.ts';
import { badge, errorBox, field, secretBox, section, select, table } from '../widgets.ts';

export async function usersPage(root: HTMLElement, s: SessionView): Promise<void> {
  const notice = h('div', { 'aria-live': 'polite' });
  const list = h('div', null);
  const refresh = async (): Promise<void> => {
    let users: UserView[];
    try { users = (await api.users()).data; } catch (e) { mount(list, errorBox(e)); return; }
    const act = (p: Promise<unknown>, done: string): void => { p.then(() => { notice.replaceChildren(h('div', { class: 'notice', role: 'status' }, done)); return refresh(); }, (e: unknown) => notice.replaceChildren(errorBox(e))); };
    mount(list, table(['User', 'Role', 'Status', 'Created', ''], users.map((u) => [
      h('div', null, h('strong', null, u.name), h('div', { class: 'muted small' }, u.email)),
      u.role, u.disabled_at ? badge('disabled', 'muted') : badge('active', 'ok'), dateTime(u.created_at),
      u.id === s.user.id ? h('span', { class: 'muted small' }, 'you') : h('div', { class: 'row-actions' },
        h('button', { type: 'button', class: 'secondary small', onclick: () => act(api.updateUser(u.id, { role: u.role === 'admin' ? 'member' : 'admin' }), `${u.email} is now ${u.role === 'admin' ? 'a member' : 'an admin'}.`) }, u.role === 'admin' ? 'Make member' : 'Make admin'),
        h('button', { type: 'button', class: 'secondary small', onclick: () => act(api.updateUser(u.id, { disabled: u.disabled_at === null }), `${u.email} ${u.disabled_at === null ? 'disabled' : 'enabled'}.`) }, u.disabled_at === null ? 'Disable' : 'Enable'),
        h('button', { type: 'button', class: 'secondary small', onclick: () => {
          if (!confirm(`Reset the password of ${u.email}? Their sessions end.`)) return;
          api.resetPassword(u.id).then((r) => notice.replaceChildren(secretBox(`New password for ${u.email}`, r.password, 'Give it to them over a safe channel; it is shown only once.')), (e: unknown) => notice.replaceChildren(errorBox(e)));
        } }, 'Reset password')),
    ]), { caption: 'Dashboard users' }));
  };
  const email = h('input', { type: 'email', name: 'email', required: true });
  const name = h('input', { type: 'text', name: 'name' });
  const role = select('role', [['member', 'Member (own keys and usage)'], ['admin', 'Admin (everything)']], 'member');
  const status = h('div', { 'aria-live': 'polite' });
  const form = h('form', { class: 'grid-form', 'aria-label': 'Create a user', onsubmit: (e: Event) => {
    e.preventDefault();
    api.createUser({ email: email.value, name: name.value || undefined, role: role.value }).then((r) => {
      status.replaceChildren();
      notice.replaceChildren(secretBox(`Created ${r.user.email}`, r.password ?? '', 'Their first password: give it to them over a safe channel; it is shown only once.'));
      form.reset();
      return refresh();
    }, (err: unknown) => status.replaceChildren(errorBox(err)));
  } }, field('Email', email), field('Name', name), field('Role', role), h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Create user')), status);
  mount(root, h('h1', null, 'Users'), section('Create a user', form), notice, list);
  await refresh();
}

export function accountPage(root: HTMLElement, s: SessionView): void {
  const cur = h('input', { type: 'password', name: 'current', autocomplete: 'current-password', required: true });
  const next = h('input', { type: 'password', name: 'new', autocomplete: 'new-password', required: true, minlength: 12 });
  // The account's email as the form's username (hidden): password managers save the new password to the right
  // account, and Chrome stops warning that a password form has no username field.
  const username = h('input', { type: 'email', name: 'username', autocomplete: 'username', value: s.user.email, readonly: true, hidden: true });
  const status = h('div', { 'aria-live': 'polite' });
  const form = h('form', { class: 'grid-form', 'aria-label': 'Change password', onsubmit: (e: Event) => {
    e.preventDefault();
    api.changePassword(cur.value, next.value).then(() => { form.reset(); username.value = s.user.email; status.replaceChildren(h('div', { class: 'notice success', role: 'status' }, 'Password changed; your other sessions ended.')); },
      (err: unknown) => status.replaceChildren(errorBox(err)));
  } }, username, field('Current password', cur), field('New password', next, 'at least 12 characters'), h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Change password')), status);
  mount(root, h('h1', null, 'Account'), section('You', h('p', null, `${s.user.name} · ${s.user.email} · ${s.user.role}`)),
    s.via === 'session' ? section('Change password', form) : null);
}
