// Who is asking, as the data modules see it: an admin (session or admin key) sees everything; a member
// sees only the keys they own, so every query of theirs is limited to those key ids.
export type Access =
  | { role: 'admin'; userId: string | null }
  | { role: 'member'; userId: string; keyIds: readonly string[] };

/** The key ids a query must stay within, or null for no limit. */
export const keyScope = (a: Access): readonly string[] | null => (a.role === 'admin' ? null : a.keyIds);

/** `col IN (?, ?, ...)` with its parameters; an empty list matches nothing. */
export function inList(col: string, values: readonly string[]): { sql: string; params: string[] } {
  if (values.length === 0) return { sql: '1 = 0', params: [] };
  return { sql: `${col} IN (${values.map(() => '?').join(', ')})`, params: [...values] };
}

/**
 * The keys a filter names (its keys, and the keys its users own) within the caller's scope; null when
 * it names none and the caller sees every key.
 */
export function scopedKeys(f: { keys?: string[] | undefined; users?: string[] | undefined }, access: Access, owners: Map<string, string>): string[] | null {
  let keys: string[] | null = f.keys && f.keys.length ? [...f.keys] : null;
  if (f.users && f.users.length) {
    const users = new Set(f.users);
    const owned = [...owners].filter(([, u]) => users.has(u)).map(([k]) => k);
    const ownedSet = new Set(owned);
    keys = keys ? keys.filter((k) => ownedSet.has(k)) : owned;
  }
  const scope = keyScope(access);
  if (scope) {
    const inScope = new Set(scope);
    keys = keys ? keys.filter((k) => inScope.has(k)) : [...scope];
  }
  return keys;
}
