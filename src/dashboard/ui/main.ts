// The dashboard's entry: checks the session, then routes /dashboard/<page> to a page module and keeps
// the navigation. Links inside the dashboard change the URL with pushState; pages read it back.
import { api, ApiError, setCsrf, setSessionEndedHandler } from './api.ts';
import type { SessionView, SignedOut } from './api-types.ts';
import { setChartRoom } from './charts.ts';
import { h, mount } from './dom.ts';
import { setNavigationHandler } from './url-state.ts';
import { keysPage } from './pages/keys.ts';
import { loginPage } from './pages/login.ts';
import { modelsPage } from './pages/models.ts';
import { requestDetailPage } from './pages/request-detail.ts';
import { requestsPage } from './pages/requests.ts';
import { routerPage } from './pages/router.ts';
import { usagePage } from './pages/usage.ts';
import { accountPage, usersPage } from './pages/users.ts';
import { errorBox } from './widgets.ts';

const app = document.getElementById('app')!;
let session: SessionView | null = null;
/** The session was lost while in use (not a first visit): the sign-in page says so. */
let ended = false;
let cleanups: Array<() => void> = [];

const PAGES: Array<{ path: string; label: string; admin?: boolean }> = [
  { path: 'usage', label: 'Usage' }, { path: 'requests', label: 'Requests' }, { path: 'keys', label: 'Keys' },
  { path: 'models', label: 'Models' }, { path: 'router', label: 'Router' }, { path: 'users', label: 'Users', admin: true }, { path: 'account', label: 'Account' },
];

function shell(s: SessionView, current: string): HTMLElement {
  const main = h('main', { id: 'main', tabindex: -1 });
  const nav = h('nav', { 'aria-label': 'Dashboard' }, h('ul', null, ...PAGES.filter((p) => !p.admin || s.user.role === 'admin').map((p) =>
    h('li', null, h('a', { href: `/dashboard/${p.path}`, 'aria-current': p.path === current ? 'page' : null }, p.label)))));
  const signOut = h('button', { type: 'button', class: 'link', onclick: () => { void api.signOut().finally(() => { session = null; history.pushState(null, '', '/dashboard/login'); void route(); }); } }, 'Sign out');
  mount(app,
    h('a', { class: 'skip', href: '#main' }, 'Skip to content'),
    h('header', { class: 'top' }, h('a', { class: 'brand', href: '/dashboard/usage' }, 'Model gateway'), h('span', { class: 'who' }, `${s.user.email} (${s.user.role})`), signOut),
    h('div', { class: 'layout' }, nav, main));
  return main;
}

/** The path last shown, to tell a filter's change (same page, new query) from going to another page. */
let shownPath = '';

/**
 * The control in main that has the focus as its page is shown again for a new query (a filter changed
 * from the keyboard), by name: the page is built anew, so the focus fell to the body and the next Tab
 * started at the top of the page, and a range picked with the arrow keys moved one step only.
 */
function focusedControl(): string | null {
  const active = document.activeElement;
  const same = location.pathname === shownPath;
  shownPath = location.pathname;
  return same && active instanceof HTMLElement && active.closest('main') ? active.getAttribute('name') : null;
}

/**
 * The session check failed (the database stalled or down: 503; the gateway unreachable). A bare error box
 * was all the page showed, with no way on but the browser's reload: the reason, and a button that tries again.
 */
function showUnavailable(e: unknown): void {
  document.title = 'Unavailable · Gateway dashboard';
  const again = h('button', { type: 'button', onclick: () => { again.disabled = true; again.textContent = 'Trying…'; void route(); } }, 'Try again');
  mount(app, h('main', { class: 'login', id: 'main' }, h('div', { class: 'login-box' },
    h('h1', null, 'Model gateway'), errorBox(e), h('p', { class: 'muted' }, 'The dashboard could not check your session.'), again)));
  again.focus();
}

/** The path and query the page shown was routed for (a fragment change alone is no new page). */
let routedFor = '';

async function route(): Promise<void> {
  routedFor = location.pathname + location.search;
  for (const c of cleanups) c();
  cleanups = [];
  const refocus = focusedControl();
  const parts = location.pathname.replace(/^\/dashboard\/?/, '').split('/').filter(Boolean);
  if (!session) {
    let found: SessionView | SignedOut;
    try { found = await api.session(); } catch (e) { showUnavailable(e); return; }
    if (found.signed_in) {
      session = found;
      setCsrf(found.csrf_token);
    } else {
      document.title = 'Sign in · Gateway dashboard';
      mount(app, loginPage(ended ? 'Your session ended (signed out in another tab, or expired): sign in again.' : null, (s) => { session = s; ended = false; setCsrf(s.csrf_token); history.replaceState(null, '', parts[0] && parts[0] !== 'login' ? location.href : '/dashboard/usage'); void route(); }));
      return;
    }
  }
  const s = session;
  const page = parts[0] === undefined || parts[0] === 'login' ? 'usage' : parts[0];
  if (page !== parts[0]) history.replaceState(null, '', `/dashboard/${page}${location.search}`);
  const main = shell(s, page);
  // Charts are drawn as wide as a panel in main is (its padding and the panel's: 2 x 28 + 2 x 19 px).
  setChartRoom(main.clientWidth - 94);
  document.title = `${PAGES.find((p) => p.path === page)?.label ?? 'Not found'} · Gateway dashboard`;
  try {
    if (page === 'usage') await usagePage(main);
    else if (page === 'requests' && parts[1]) await requestDetailPage(main, decodeURIComponent(parts[1]));
    else if (page === 'requests') await requestsPage(main, (f) => cleanups.push(f));
    else if (page === 'keys') await keysPage(main, s, (f) => cleanups.push(f));
    else if (page === 'models') await modelsPage(main);
    else if (page === 'router') await routerPage(main, s.user.role === 'admin');
    else if (page === 'users' && s.user.role === 'admin') await usersPage(main, s);
    else if (page === 'account') accountPage(main, s);
    else mount(main, h('h1', null, 'Not found'), h('p', null, 'No such page.'));
  } catch (e) {
    if (e instanceof ApiError && e.code === 'session_required') return; // the session-ended handler has gone to sign-in
    mount(main, errorBox(e));
  }
  main.setAttribute('data-ready', 'true');
  if (refocus) main.querySelector<HTMLElement>(`[name="${CSS.escape(refocus)}"]`)?.focus();
  // Another page: the focus goes to its content (it fell to the body, so the next Tab started again at
  // the skip link and the navigation, and a screen reader was not told the page changed).
  else if (pageChanged) main.focus({ preventScroll: true });
  pageChanged = false;
}

/** The next page shown was asked for by a link or the browser's history: the focus moves to its main. */
let pageChanged = false;

// In-dashboard links navigate without a reload; everything else behaves as usual.
document.addEventListener('click', (e) => {
  const a = (e.target as Element | null)?.closest?.('a');
  if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || a.hasAttribute('download')) return;
  const url = new URL(a.href, location.href);
  if (url.origin !== location.origin || !url.pathname.startsWith('/dashboard')) return;
  // A jump within this page (the skip link, #main) is the browser's: routed, it rebuilt the page, the
  // focus fell to the body and the next Tab came back to the skip link.
  if (url.hash && url.pathname === location.pathname && url.search === location.search) return;
  e.preventDefault();
  pageChanged = url.pathname !== location.pathname;
  history.pushState(null, '', url.pathname + url.search);
  void route();
});
// The skip link's jump to #main is a history entry too, and its popstate re-routed the page: the page was
// rebuilt and the focus put back on main after the keyboard user's next Tab had already moved on.
window.addEventListener('popstate', () => {
  if (location.pathname + location.search === routedFor) return;
  pageChanged = true;
  void route();
});
setNavigationHandler(() => void route());
// Any call finding the session gone (a page's load, a save, the live tail's check) leads to sign-in.
setSessionEndedHandler(() => { if (!session) return; session = null; ended = true; void route(); });
void route();
