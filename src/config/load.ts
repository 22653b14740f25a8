// Reads gateway.yaml and providers/*.yaml (with their generated catalogs), validates them with the
// published JSON Schemas and semantic checks, and returns the raw documents. Errors name file and path.
import { isUtf8 } from 'node:buffer';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { parseDocument } from 'yaml';
import { substituteDeep, providerBaseUrl, providerEnvName, type Env } from './env.ts';
import { validatorFor } from './schemas.ts';
import { numberRangeProblems } from './number-range.ts';
import { policyNameProblems, providerNameProblems } from './name-checks.ts';
import type { UnsetVariable } from './env-warnings.ts';
import { checkRule } from '../mapping/logic.ts';
import { MAPPING_VARS, type MappingRow } from '../mapping/compile.ts';
import { TRANSFORM_NAMES } from '../transforms/index.ts';
import { ADMIN_KEY_MIN_LENGTH } from '../auth/admin-key.ts';
import { checkRouterConfig } from '../router/policy.ts';
import { checkPriorSources, type PriorTable } from '../router/quality/prior.ts';
import { rollupRetentionOf, rollupRetentionProblem } from '../store/rollup-retention.ts';

export type ConfigProblem = { file: string; path: string; message: string };

export class ConfigError extends Error {
  readonly problems: ConfigProblem[];
  /**
   * Every file the refused config named (absolute paths, missing ones included): the reload watcher
   * follows them, so the edit that fixes the config (creating a missing priors file, say) reloads.
   */
  readonly files: string[];
  constructor(problems: ConfigProblem[], files: string[] = []) {
    super(problems.map((p) => `${p.file}${p.path ? ` at ${p.path}` : ''}: ${p.message}`).join('\n'));
    this.name = 'ConfigError';
    this.problems = problems;
    this.files = files;
  }
}

export type RawProvider = Record<string, unknown> & {
  id: string; format: string; base_url: string; api_key?: string; mappings?: MappingRow[];
  catalog?: string; models?: Array<Record<string, unknown>>;
  model_overrides?: Record<string, { upstream?: string; enabled?: boolean }>;
};
export type RawCatalog = { provider: string; models: Array<Record<string, unknown>> };
export type RawConfig = {
  file: string; dir: string; providersDir: string; gateway: Record<string, unknown>;
  providers: Array<{ file: string; doc: RawProvider; catalog: RawCatalog | null; catalogFile: string | null }>;
  files: string[]; hash: string;
  /** router.priors_file's table, read and checked (src/router/quality/prior.ts checkPriorSources), or null. */
  priors: PriorTable | null;
  /** Likely mistakes that do not stop the config: each use of a ${VAR} without default that was not set. */
  warnings: UnsetVariable[];
};

/** Loads and validates everything; throws ConfigError listing every problem found. */
export function loadConfig(file: string, env: Env = process.env): RawConfig {
  const problems: ConfigProblem[] = [];
  /** Not errors, but likely mistakes `check` reports: a ${VAR} without default that is not set. */
  const warnings: UnsetVariable[] = [];
  const hash = createHash('sha256');
  const files: string[] = [];
  /** Every file named, read or not (ConfigError.files). */
  const named: string[] = [];
  /** gateway.yaml as parsed, valid or not: its providers_dir still says where the providers are. */
  let gatewayDraft: Record<string, unknown> | undefined;
  const read = (f: string, schema: 'gateway' | 'provider' | 'catalog' | 'priors'): Record<string, unknown> | null => {
    const shown = relative(process.cwd(), f) || f;
    named.push(f);
    let bytes: Buffer;
    try { bytes = readFileSync(f); } catch (e) {
      problems.push({ file: shown, path: '', message: `cannot read: ${(e as Error).message}` });
      return null;
    }
    // Decoding with U+FFFD in place of bad bytes would serve a changed API key or header value.
    const badLine = firstNonUtf8Line(bytes);
    if (badLine > 0) {
      problems.push({ file: shown, path: `line ${badLine}`, message: 'not UTF-8 text (saved in another encoding, such as Latin-1?)' });
      return null;
    }
    const text = bytes.toString('utf8');
    files.push(f);
    hash.update(f).update('\0').update(text).update('\0');
    // YAML 1.1 merge keys (`<<: *defaults`) are read as merges, as most YAML tools do; without the
    // option the yaml package (YAML 1.2) kept `<<` as a key, refused as an unknown property "<<".
    const doc = parseDocument(text, { prettyErrors: true, merge: true });
    if (doc.errors.length > 0) {
      for (const e of doc.errors) problems.push({ file: shown, path: `line ${e.linePos?.[0]?.line ?? '?'}`, message: e.message.split('\n')[0]! });
      return null;
    }
    let value: unknown;
    // toJS refuses a document whose aliases expand too far (a "billion laughs"): named like any other problem.
    const unset = (name: string, at: string) => warnings.push({ file: shown, path: at, variable: name, message: `\${${name}} is not set: the value is empty (write \${${name}:-} if that is meant)` });
    try { value = substituteDeep(doc.toJS(), env, unset); } catch (e) {
      problems.push({ file: shown, path: '', message: (e as Error).message });
      return null;
    }
    // A list is no gateway.yaml (refused by the schema): it names no providers_dir either.
    if (schema === 'gateway' && value !== null && typeof value === 'object' && !Array.isArray(value)) gatewayDraft = value as Record<string, unknown>;
    const outOfRange = numberRangeProblems(value, shown);
    if (outOfRange.length > 0) { problems.push(...outOfRange); return null; }
    const validate = validatorFor(schema);
    if (!validate(value)) {
      for (const e of validate.errors ?? []) {
        const extra = e.keyword === 'additionalProperties' ? ` "${(e.params as { additionalProperty: string }).additionalProperty}"` : '';
        problems.push({ file: shown, path: e.instancePath || '/', message: `${e.message ?? 'invalid'}${extra}` });
      }
      return null;
    }
    return value as Record<string, unknown>;
  };

  const path = resolve(file);
  const dir = dirname(path);
  const gateway = read(path, 'gateway');
  // A gateway.yaml refused for another field still names its providers_dir; one that could not be read
  // or parsed names none, and a missing default directory then is no problem of its own.
  const namedDir = gatewayDraft?.providers_dir;
  const providersDir = resolve(dir, typeof namedDir === 'string' ? namedDir : './providers');
  const providers: RawConfig['providers'] = [];
  let names: string[] = [];
  try { names = readdirSync(providersDir).filter((n) => n.endsWith('.yaml') || n.endsWith('.yml')).sort(); } catch (e) {
    if (gatewayDraft !== undefined || (e as NodeJS.ErrnoException).code !== 'ENOENT') {
      problems.push({ file: relative(process.cwd(), providersDir), path: '', message: `cannot read providers directory: ${(e as Error).message}` });
    }
  }
  const seen = new Set<string>();
  for (const n of names) {
    const pfile = join(providersDir, n);
    const shown = relative(process.cwd(), pfile);
    const doc = read(pfile, 'provider') as RawProvider | null;
    if (!doc) continue;
    const id = doc.id;
    if (basename(n).replace(/\.ya?ml$/, '') !== id) problems.push({ file: shown, path: '/id', message: `provider id "${id}" must match the file name` });
    if (seen.has(id)) problems.push({ file: shown, path: '/id', message: `duplicate provider id "${id}"` });
    // "router" names router mode: `model: "router"` and its record in GET /v1/models (?provider=router).
    if (id === 'router') problems.push({ file: shown, path: '/id', message: 'provider id "router" is reserved for router mode (model "router"); name the provider otherwise' });
    seen.add(id);
    applyProviderEnv(doc, env);
    problems.push(...checkProvider(doc, shown), ...providerNameProblems(doc, shown));
    let catalog: RawCatalog | null = null;
    let catalogFile: string | null = null;
    if (doc.catalog !== undefined) {
      catalogFile = resolve(providersDir, doc.catalog);
      if (!existsSync(catalogFile)) {
        named.push(catalogFile);
        problems.push({ file: shown, path: '/catalog', message: `catalog file ${doc.catalog} does not exist` });
      } else {
        catalog = read(catalogFile, 'catalog') as RawCatalog | null;
        if (catalog && catalog.provider !== id) problems.push({ file: relative(process.cwd(), catalogFile), path: '/provider', message: `catalog is for "${catalog.provider}", included by "${id}"` });
      }
    }
    providers.push({ file: pfile, doc, catalog, catalogFile });
  }
  if (gateway) problems.push(...checkFallbacks(gateway, providers, relative(process.cwd(), path)));
  if (gateway) problems.push(...checkAdminKey(gateway, env, relative(process.cwd(), path)));
  if (gateway) problems.push(...checkServerTimeouts(gateway, relative(process.cwd(), path)));
  problems.push(...checkPortEnv(env));
  problems.push(...checkRedisUrl(gateway ?? {}, env, relative(process.cwd(), path)));
  problems.push(...checkDatabaseUrl(gateway ?? {}, env, relative(process.cwd(), path)));
  if (gateway) for (const q of checkRouterConfig(gateway.router)) problems.push({ file: relative(process.cwd(), path), ...q });
  if (gateway) problems.push(...policyNameProblems(gateway, relative(process.cwd(), path)));
  let priors: RawConfig['priors'] = null;
  const priorsFile = (gateway?.router as Record<string, unknown> | undefined)?.priors_file;
  if (typeof priorsFile === 'string') {
    const pf = resolve(dir, priorsFile);
    const table = read(pf, 'priors') as PriorTable | null;
    if (table) {
      const shown = relative(process.cwd(), pf) || pf;
      for (const q of checkPriorSources(table)) problems.push({ file: shown, ...q });
      priors = table;
    }
  }
  const rollups = gateway ? rollupRetentionProblem(rollupRetentionOf(retentionOf(gateway))) : null;
  if (rollups) problems.push({ file: relative(process.cwd(), path), path: '/dashboard/retention', message: rollups });
  if (problems.length > 0) throw new ConfigError(problems, named);
  return { file: path, dir, providersDir, gateway: gateway!, providers, files, hash: hash.digest('hex').slice(0, 16), priors, warnings };
}

/** The 1-based line of the first byte sequence that is not UTF-8, or 0 when the text is UTF-8. */
function firstNonUtf8Line(bytes: Buffer): number {
  if (isUtf8(bytes)) return 0;
  // A newline byte is never part of a multibyte sequence: each line is valid or not by itself.
  for (let line = 1, start = 0; start <= bytes.length; line++) {
    const end = bytes.indexOf(0x0a, start);
    if (!isUtf8(bytes.subarray(start, end < 0 ? bytes.length : end))) return line;
    if (end < 0) break;
    start = end + 1;
  }
  return 1;
}

const objectAt = (o: unknown, k: string): Record<string, unknown> =>
  (o !== null && typeof o === 'object' && k in o && typeof (o as Record<string, unknown>)[k] === 'object' ? (o as Record<string, Record<string, unknown>>)[k] ?? {} : {});
const retentionOf = (gateway: Record<string, unknown>): Record<string, unknown> => objectAt(objectAt(gateway, 'dashboard'), 'retention');

/** `<PROVIDER>_BASE_URL` (in the vendor's client convention, see providerBaseUrl) and `<PROVIDER>_API_KEY` win over the YAML. */
function applyProviderEnv(doc: RawProvider, env: Env): void {
  const url = env[providerEnvName(doc.id, 'BASE_URL')];
  if (url) doc.base_url = providerBaseUrl(url, doc.base_url, String(doc.format));
  const key = env[providerEnvName(doc.id, 'API_KEY')];
  if (key) doc.api_key = key;
}

function checkProvider(doc: RawProvider, file: string): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  try { new URL(doc.base_url); } catch { out.push({ file, path: '/base_url', message: `not a URL: ${doc.base_url}` }); }
  (doc.mappings ?? []).forEach((row, i) => {
    if (row.when !== undefined) {
      for (const m of checkRule(row.when, MAPPING_VARS)) out.push({ file, path: `/mappings/${i}/when`, message: m });
    }
    const actions = [row.rename, row.drop, row.reject, row.default, row.values, row.min ?? row.max].filter((x) => x !== undefined && x !== false);
    if (actions.length === 0) out.push({ file, path: `/mappings/${i}`, message: 'a mapping row needs an action: rename, drop, reject, default, values, min or max' });
    if ((row.min !== undefined || row.max !== undefined) && row.out_of_range === undefined) {
      out.push({ file, path: `/mappings/${i}`, message: 'min/max need out_of_range: clamp or reject (never silent)' });
    }
  });
  // A second entry with the same name replaced the first without a word (src/catalog/compile-catalog.ts
  // keys models by name): two prices for one model, one silently dropped.
  const firstAt = new Map<string, number>();
  (doc.models ?? []).forEach((m, i) => {
    const name = m.name as string;
    const first = firstAt.get(name);
    if (first === undefined) firstAt.set(name, i);
    else out.push({ file, path: `/models/${i}/name`, message: `duplicate model "${name}" (also at /models/${first}); keep one entry` });
  });
  const auth = doc.auth as { type: string; transform?: string };
  if (auth.type === 'transform' && !TRANSFORM_NAMES.includes(auth.transform!)) {
    out.push({ file, path: '/auth/transform', message: `unknown transform "${auth.transform}" (known: ${TRANSFORM_NAMES.join(', ')})` });
  }
  return out;
}

/** A short admin key is refused at load (start, reload and `check`): it guards key management for every tenant. */
function checkAdminKey(gateway: Record<string, unknown>, env: Env, file: string): ConfigProblem[] {
  const inFile = ((gateway.auth ?? {}) as { admin_key?: string }).admin_key;
  const key = inFile || env.GATEWAY_ADMIN_KEY || '';
  if (key === '' || key.length >= ADMIN_KEY_MIN_LENGTH) return [];
  return [{
    file: inFile ? file : 'environment', path: inFile ? '/auth/admin_key' : 'GATEWAY_ADMIN_KEY',
    message: `the admin key is ${key.length} characters; it must be at least ${ADMIN_KEY_MIN_LENGTH} (generate one with: openssl rand -hex 32), or empty to disable the admin API`,
  }];
}

/**
 * storage.redis_url as ioredis reads it (a socket path, redis:// or rediss://, or host:port): a value
 * it cannot parse passed check and then ended serve with 'TypeError: Invalid URL' and a stack trace.
 */
function checkRedisUrl(gateway: Record<string, unknown>, env: Env, file: string): ConfigProblem[] {
  // REDIS_URL applies when the file sets none (src/config/compile.ts): it passed check and ended serve the same way.
  const inFile = ((gateway.storage ?? {}) as { redis_url?: string }).redis_url;
  const url = inFile || env.REDIS_URL;
  if (!url || (url.startsWith('/') && !url.startsWith('//'))) return [];
  const full = /^rediss?:\/\//i.test(url) ? url : url.startsWith('//') ? `redis:${url}` : `redis://${url}`;
  try { new URL(full); return []; } catch {
    return [{
      file: inFile ? file : 'environment', path: inFile ? '/storage/redis_url' : 'REDIS_URL',
      message: `not a Redis URL: "${url}" (like redis://host:6379/0, rediss://host:6380, host:6379 or /path/to/redis.sock)`,
    }];
  }
}

/**
 * storage.database_url (else DATABASE_URL) names PostgreSQL, the one server store: `mysql://x` passed
 * check and was then tried as PostgreSQL.
 */
function checkDatabaseUrl(gateway: Record<string, unknown>, env: Env, file: string): ConfigProblem[] {
  const inFile = ((gateway.storage ?? {}) as { database_url?: string }).database_url;
  const url = inFile || env.DATABASE_URL;
  if (!url || /^(postgres|postgresql|socket):/i.test(url)) return [];
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1];
  return [{
    file: inFile ? file : 'environment', path: inFile ? '/storage/database_url' : 'DATABASE_URL',
    message: `${scheme ? `a ${scheme}: URL` : 'not a URL'}: the gateway stores in PostgreSQL (postgres://user:password@host:5432/db) or, with neither set, SQLite`,
  }];
}

/**
 * PORT overrides server.port (src/config/compile.ts) and skips the schema: 'abc' or 99999 passed check,
 * then serve died in listen() with ERR_SOCKET_BAD_PORT and a stack trace.
 */
function checkPortEnv(env: Env): ConfigProblem[] {
  const port = env.PORT;
  if (port === undefined || port === '' || (/^\d{1,5}$/.test(port) && Number(port) <= 65535)) return [];
  return [{ file: 'environment', path: 'PORT', message: `PORT must be a whole number from 0 to 65535 (it overrides server.port), got "${port}"` }];
}

/**
 * Node refuses a request timeout below the headers timeout (ERR_OUT_OF_RANGE from createServer): the
 * gateway failed to start with a stack trace, and a reload set the pair on the running server as given.
 */
export const SERVER_TIMEOUT_DEFAULTS = { headersMs: 10_000, requestMs: 120_000 } as const;

function checkServerTimeouts(gateway: Record<string, unknown>, file: string): ConfigProblem[] {
  const server = (gateway.server ?? {}) as { headers_timeout_ms?: unknown; request_timeout_ms?: unknown };
  const headers = typeof server.headers_timeout_ms === 'number' ? server.headers_timeout_ms : SERVER_TIMEOUT_DEFAULTS.headersMs;
  const request = typeof server.request_timeout_ms === 'number' ? server.request_timeout_ms : SERVER_TIMEOUT_DEFAULTS.requestMs;
  if (request >= headers) return [];
  return [{ file, path: '/server/request_timeout_ms', message: `request_timeout_ms (${request}) must be at least headers_timeout_ms (${headers}): the whole request includes its headers` }];
}

function checkFallbacks(gateway: Record<string, unknown>, providers: RawConfig['providers'], file: string): ConfigProblem[] {
  const fallbacks = (gateway.fallbacks ?? {}) as Record<string, string[]>;
  const known = new Set<string>();
  for (const p of providers) {
    for (const m of [...(p.catalog?.models ?? []), ...(p.doc.models ?? [])]) known.add(`${p.doc.id}/${m.name as string}`);
  }
  const out: ConfigProblem[] = [];
  for (const [from, list] of Object.entries(fallbacks)) {
    for (const id of [from, ...list]) {
      if (!known.has(id)) out.push({ file, path: `/fallbacks/${from}`, message: `unknown model "${id}"` });
    }
  }
  return out;
}
