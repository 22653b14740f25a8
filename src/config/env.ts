// ${VAR} and ${VAR:-default} substitution in YAML string values (after parsing, so a value can
// never inject YAML structure). Defaults may nest: ${A:-${B:-x}}.

export type Env = Record<string, string | undefined>;

/** Substitutes variables in one string; an unset ${VAR} without default becomes ''. */
export function substitute(s: string, env: Env): string {
  if (!s.includes('${')) return s;
  let out = '';
  let i = 0;
  while (i < s.length) {
    const start = s.indexOf('${', i);
    if (start < 0) { out += s.slice(i); break; }
    out += s.slice(i, start);
    const end = matchingBrace(s, start + 2);
    if (end < 0) { out += s.slice(start); break; }
    out += expand(s.slice(start + 2, end), env);
    i = end + 1;
  }
  return out;
}

function matchingBrace(s: string, from: number): number {
  let depth = 1;
  for (let j = from; j < s.length; j++) {
    if (s[j] === '$' && s[j + 1] === '{') { depth++; j++; }
    else if (s[j] === '}' && --depth === 0) return j;
  }
  return -1;
}

function expand(expr: string, env: Env): string {
  const sep = expr.indexOf(':-');
  const name = sep < 0 ? expr : expr.slice(0, sep);
  const value = env[name.trim()];
  if (value !== undefined && value !== '') return value;
  return sep < 0 ? '' : substitute(expr.slice(sep + 2), env);
}

/** Walks parsed YAML and substitutes every string value (keys are left alone). */
export function substituteDeep(v: unknown, env: Env): unknown {
  if (typeof v === 'string') return substitute(v, env);
  if (Array.isArray(v)) return v.map((x) => substituteDeep(x, env));
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = substituteDeep(x, env);
    return out;
  }
  return v;
}

/** `<PROVIDER>_BASE_URL` / `<PROVIDER>_API_KEY` names for a provider id (upper case, '-' as '_'). */
export const providerEnvName = (id: string, suffix: 'BASE_URL' | 'API_KEY'): string =>
  `${id.toUpperCase().replace(/-/g, '_')}_${suffix}`;
