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
