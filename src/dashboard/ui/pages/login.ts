// Sign-in: email and password; the session cookie is set by the API (HttpOnly, never seen by scripts).
import { api } from '../api.ts';
import { h } from '../dom.ts';
import { errorBox, field } from '../widgets.ts';
import type { SessionView } from '../api-types.ts';

/** The sign-in page; `notice` says why it is shown again (the session ended while in use). */
export function loginPage(notice: string | null, onSignedIn: (s: SessionView) => void): HTMLElement {
  const email = h('input', { type: 'email', name: 'email', autocomplete: 'username', required: true, autofocus: true });
  const password = h('input', { type: 'password', name: 'password', autocomplete: 'current-password', required: true });
  const status = h('div', { 'aria-live': 'polite' });
  const form = h('form', {
    class: 'login-form',
    onsubmit: (e: Event) => {
      e.preventDefault();
      status.replaceChildren();
      api.signIn(email.value, password.value).then(onSignedIn, (err: unknown) => status.replaceChildren(errorBox(err)));
    },
  }, field('Email', email), field('Password', password), h('button', { type: 'submit' }, 'Sign in'), status);
  return h('main', { class: 'login', id: 'main' },
    h('div', { class: 'login-box' },
      h('h1', null, 'Model gateway'),
      notice ? h('div', { class: 'notice', role: 'alert' }, notice) : null,
      h('p', { class: 'muted' }, 'Sign in to manage keys and see usage, requests and models.'),
      form,
      h('p', { class: 'muted small' }, 'No account? An admin creates one (the first with: npm run gateway -- users create --admin --email you@example.com).')));
}
