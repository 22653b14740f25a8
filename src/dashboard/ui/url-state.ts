// Filters live in the URL: pages read their state from location and write it back with pushState, so
// a view can be bookmarked, shared and reloaded. `navigate` is the one way pages change location.

export type Query = Record<string, string>;

export function readQuery(search: string = location.search): Query {
  const out: Query = {};
  for (const [k, val] of new URLSearchParams(search)) if (val !== '') out[k] = val;
  return out;
}

/** `base` with `patch` applied (empty values removed), as a query string with a leading ? (or ''). */
export function withQuery(base: Query, patch: Record<string, string | null | undefined>): string {
  const next: Query = { ...base };
  for (const [k, val] of Object.entries(patch)) { if (val === null || val === undefined || val === '') delete next[k]; else next[k] = val; }
  const s = new URLSearchParams(Object.entries(next).sort(([a], [b]) => (a < b ? -1 : 1))).toString();
  return s ? `?${s}` : '';
}

let onNavigate: () => void = () => {};
export const setNavigationHandler = (f: () => void): void => { onNavigate = f; };

export function navigate(url: string, replace = false): void {
  if (replace) history.replaceState(null, '', url); else history.pushState(null, '', url);
  onNavigate();
}
