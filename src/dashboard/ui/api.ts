// The dashboard's one typed client of the admin API (/admin/api/v1): every page reads through it. Changes
// carry the session's CSRF token; errors become ApiError with the API's stable code.
import type {
  ApiErrorBody, CreatedKey, KeyInput, KeyView, ModelComparison, ModelInfo, RequestDetail, RequestPage, RouterOverview, RouterPreview, RouterProviders, RouterStates, RouterStoredState, SessionView,
  SignedOut, UsageReport, UserView,
} from './api-types.ts';

export const API = '/admin/api/v1';

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly param: string | null;
  constructor(status: number, code: string, message: string, param: string | null) {
    super(message);
    this.status = status; this.code = code; this.param = param;
  }
}

let csrf = '';
export const setCsrf = (token: string): void => { csrf = token; };

let sessionEnded: () => void = () => {};
/** Called when any call finds no session (401 session_required): signed out in another tab, or expired. */
export const setSessionEndedHandler = (f: () => void): void => { sessionEnded = f; };

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET') headers['x-csrf-token'] = csrf;
  let res: Response;
  try {
    res = await fetch(API + path, { method, headers, credentials: 'same-origin', body: body === undefined ? null : JSON.stringify(body) });
  } catch {
    throw new ApiError(0, 'network_error', 'the gateway did not answer (network error or the gateway is down): try again', null);
  }
  const text = await res.text();
  let data: unknown = null;
  // A proxy in front of the gateway (a 502 or 504 page) or a cut answer is no JSON: say what came back.
  try { data = text ? JSON.parse(text) as unknown : null; } catch {
    throw new ApiError(res.status, 'http_error', `the gateway's answer was not JSON (HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}): try again`, null);
  }
  if (!res.ok) {
    const e = (data as ApiErrorBody | null)?.error;
    if (res.status === 401 && e?.code === 'session_required') sessionEnded();
    throw new ApiError(res.status, e?.code ?? 'http_error', e?.message ?? `HTTP ${res.status}`, e?.param ?? null);
  }
  return data as T;
}

/** A query string from a record, leaving out empty values. */
export function qs(params: Record<string, string | number | boolean | null | undefined>): string {
  const p = new URLSearchParams();
  for (const [k, val] of Object.entries(params)) if (val !== undefined && val !== null && val !== '') p.set(k, String(val));
  const s = p.toString();
  return s ? `?${s}` : '';
}

export const api = {
  /** The session, or signed out (200, not 401: a first visit is no error); finding it gone while in use leads to sign-in as any call's 401 does. */
  session: async (): Promise<SessionView | SignedOut> => {
    const s = await call<SessionView | SignedOut>('GET', '/session');
    if (!s.signed_in) sessionEnded();
    return s;
  },
  signIn: (email: string, password: string) => call<SessionView>('POST', '/session', { email, password }),
  signOut: () => call<{ signed_out: boolean }>('DELETE', '/session'),
  changePassword: (current_password: string, new_password: string) => call<{ changed: boolean }>('POST', '/session/password', { current_password, new_password }),

  users: () => call<{ data: UserView[] }>('GET', '/users'),
  createUser: (u: { email: string; name?: string; role: string; password?: string }) => call<{ user: UserView; password?: string }>('POST', '/users', u),
  updateUser: (id: string, patch: { name?: string; role?: string; disabled?: boolean }) => call<{ user: UserView }>('PATCH', `/users/${encodeURIComponent(id)}`, patch),
  resetPassword: (id: string) => call<{ password: string }>('POST', `/users/${encodeURIComponent(id)}/password`),

  /** Keys newest first; with `limit` one page of them and the cursor to the next (null at the end). */
  keys: (page?: { limit: number; cursor?: string | null }) => call<{ data: KeyView[]; next_cursor: string | null }>('GET', `/keys${page ? qs({ limit: page.limit, cursor: page.cursor }) : ''}`),
  createKey: (k: KeyInput) => call<CreatedKey>('POST', '/keys', k),
  updateKey: (id: string, k: Partial<KeyInput>) => call<KeyView>('PATCH', `/keys/${encodeURIComponent(id)}`, k),
  rotateKey: (id: string, grace_hours: number) => call<CreatedKey & { previous_secret_valid_until: string | null }>('POST', `/keys/${encodeURIComponent(id)}/rotate`, { grace_hours }),
  revokeKey: (id: string) => call<{ revoked: boolean }>('DELETE', `/keys/${encodeURIComponent(id)}`),

  usage: (query: string) => call<UsageReport>('GET', `/usage${query}`),
  requests: (query: string) => call<RequestPage>('GET', `/requests${query}`),
  request: (id: string) => call<RequestDetail>('GET', `/requests/${encodeURIComponent(id)}`),
  models: () => call<{ data: ModelInfo[] }>('GET', '/models'),
  compare: (query: string) => call<ModelComparison>('GET', `/models/compare${query}`),
  router: (query: string) => call<RouterOverview>('GET', `/router${query}`),
  routerProviders: () => call<RouterProviders>('GET', '/router/providers'),
  /** A dry run: `body` a chat-completions request (model "router" or left out), ranked as key `keyId` (or no key) would get it. */
  routerPreview: (body: Record<string, unknown>, keyId: string | null) => call<RouterPreview>('POST', `/router/preview${qs({ key_id: keyId })}`, body),
  routerStates: (limit: number) => call<RouterStates>('GET', `/router/states${qs({ limit })}`),
  /** A rollback to `version`, or a reset to the priors (version null). */
  restoreRouterState: (version: number | null, reason: string) => call<{ state: RouterStoredState; serving_version: number | null }>('POST', '/router/states',
    version === null ? { action: 'reset', reason: reason || undefined } : { action: 'rollback', version, reason: reason || undefined }),
};
