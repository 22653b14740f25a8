// ${VAR} and ${VAR:-default} substitution in YAML string values (after parsing, so a value can
// never inject YAML structure). Defaults may nest: ${A:-${B:-x}}.

export type Env = Record<string, string | undefined>;

/** Substitutes variables in one string; an unset ${VAR} without default becomes '' (and is passed to `unset`). */
export function substitute(s: string, env: Env, unset?: (name: string) => void): string {
  if (!s.includes('${')) return s;
  let out = '';
  let i = 0;
  while (i < s.length) {
    const start = s.indexOf('${', i);
    if (start < 0) { out += s.slice(i); break; }
    out += s.slice(i, start);
    const end = matchingBrace(s, start + 2);
    if (end < 0) { out += s.slice(start); break; }
    out += expand(s.slice(start + 2, end), env, unset);
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

function expand(expr: string, env: Env, unset?: (name: string) => void): string {
  const sep = expr.indexOf(':-');
  const name = sep < 0 ? expr : expr.slice(0, sep);
  const value = env[name.trim()];
  if (value !== undefined && value !== '') return value;
  if (sep < 0) { unset?.(name.trim()); return ''; }
  return substitute(expr.slice(sep + 2), env, unset);
}

/**
 * Walks parsed YAML and substitutes every string value (keys are left alone). `unset` hears each
 * ${VAR} without a default that was unset or empty, with the JSON pointer of the value naming it.
 */
export function substituteDeep(v: unknown, env: Env, unset?: (name: string, path: string) => void, path = '', within = new Set<object>()): unknown {
  if (typeof v === 'string') return substitute(v, env, unset && ((name) => unset(name, path || '/')));
  if (v === null || typeof v !== 'object') return v;
  // An alias inside the node it names (`a: &a [*a]`) parses to a value that contains itself: walking it
  // ended in "Maximum call stack size exceeded", which named nothing.
  if (within.has(v)) throw new Error(`the YAML alias at ${path || '/'} refers to a node that contains it (the value would be infinite)`);
  within.add(v);
  try {
    if (Array.isArray(v)) return v.map((x, i) => substituteDeep(x, env, unset, `${path}/${i}`, within));
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = substituteDeep(x, env, unset, `${path}/${k}`, within);
    return out;
  } finally { within.delete(v); }
}

/** `<PROVIDER>_BASE_URL` / `<PROVIDER>_API_KEY` names for a provider id (upper case, '-' as '_'). */
export const providerEnvName = (id: string, suffix: 'BASE_URL' | 'API_KEY'): string =>
  `${id.toUpperCase().replace(/-/g, '_')}_${suffix}`;

/** A version path segment as providers' base URLs end in: v1, v1beta, v2alpha1... */
const VERSION_SEGMENT = /\/v\d+(?:(?:alpha|beta)\d*)?$/;

/**
 * A `<PROVIDER>_BASE_URL` value -> the base URL requests go to, accepting each vendor's client
 * convention: the Anthropic SDK and Claude Code read ANTHROPIC_BASE_URL as the address without the
 * version (they add /v1/messages), Google's SDKs likewise (they add /v1beta), while OpenAI's SDK
 * reads OPENAI_BASE_URL with /v1 (it adds /chat/completions). Either form works: when the YAML
 * base_url ends in a version segment and the value does not, that segment is added to an
 * Anthropic- or Gemini-format value, and to any value that is a bare origin (an OpenAI-compatible
 * server at `http://host:port`). A value with a path of its own in the OpenAI convention is the
 * full base, as OpenAI's SDK takes it.
 */
export function providerBaseUrl(value: string, yamlBaseUrl: string, format: string): string {
  const trimmed = value.replace(/\/+$/, '');
  let yamlPath: string;
  let path: string;
  try {
    yamlPath = new URL(yamlBaseUrl).pathname.replace(/\/+$/, '');
    path = new URL(trimmed).pathname.replace(/\/+$/, '');
  } catch {
    return value; // not a URL: the loader reports it against the provider file
  }
  const version = VERSION_SEGMENT.exec(yamlPath)?.[0];
  if (version === undefined || VERSION_SEGMENT.test(path)) return trimmed;
  const sdkAddsVersion = format === 'anthropic-messages' || format === 'gemini';
  return sdkAddsVersion || path === '' ? `${trimmed}${version}` : trimmed;
}
