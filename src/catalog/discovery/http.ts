// GETs for live discovery: a provider's auth applied to a GET (bearer, header, query or a signing
// transform), a per-request timeout, a size cap, and failures sorted into kinds a report can show.
import type { Provider } from '../../config/types.ts';
import { canAuthenticate } from '../../config/credentials.ts';
import { TRANSFORMS } from '../../transforms/index.ts';

export type FetchFailureKind = 'auth' | 'http' | 'timeout' | 'network' | 'invalid';

/** A failed discovery request. Messages never carry credentials or response bodies beyond a short excerpt. */
export class DiscoveryError extends Error {
  readonly kind: FetchFailureKind;
  readonly status: number | null;
  constructor(kind: FetchFailureKind, message: string, status: number | null = null) {
    super(message);
    this.name = 'DiscoveryError';
    this.kind = kind;
    this.status = status;
  }
}

/** The most a model list may weigh: OpenRouter's whole list is about 1 MB, models.dev's about 3 MB. */
const MAX_BYTES = 32 * 1024 * 1024;

export type GetOptions = { headers?: Record<string, string>; timeoutMs: number; signal?: AbortSignal };

/**
 * The body as text, read chunk by chunk and given up past MAX_BYTES: an answer without a length (chunked)
 * that never ends would otherwise be held whole until the timeout, gigabytes from a fast source.
 */
async function cappedText(res: Response, tooBig: () => Error): Promise<string> {
  if (!res.body) return '';
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    if (bytes > MAX_BYTES) { await reader.cancel().catch(() => {}); throw tooBig(); }
    chunks.push(value);
  }
  return new TextDecoder().decode(Buffer.concat(chunks)); // as res.text(): a BOM dropped
}

/** GET a JSON document; throws DiscoveryError (auth for 401/403, http for other statuses, timeout, network, invalid JSON). */
export async function getJson(url: string, opts: GetOptions): Promise<unknown> {
  const timeout = AbortSignal.timeout(opts.timeoutMs);
  const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
  const shown = new URL(url);
  shown.search = ''; // query strings may hold a key (auth: query)
  let res: Response;
  try {
    res = await fetch(url, { headers: { accept: 'application/json', ...opts.headers }, signal, redirect: 'error' });
  } catch (e) {
    if (timeout.aborted) throw new DiscoveryError('timeout', `${shown} did not answer within ${opts.timeoutMs} ms`);
    throw new DiscoveryError('network', `${shown}: ${(e as Error).cause instanceof Error ? ((e as Error).cause as Error).message : (e as Error).message}`);
  }
  try {
    if (res.status === 401 || res.status === 403) {
      throw new DiscoveryError('auth', `${shown} refused the credentials (${res.status}); check the provider's key`, res.status);
    }
    const declared = Number(res.headers.get('content-length') ?? '0');
    if (declared > MAX_BYTES) throw new DiscoveryError('invalid', `${shown} sent ${declared} bytes, more than the ${MAX_BYTES} allowed`);
    const text = await cappedText(res, () => new DiscoveryError('invalid', `${shown} sent more than the ${MAX_BYTES} bytes allowed`));
    if (!res.ok) throw new DiscoveryError('http', `${shown} answered ${res.status}: ${text.slice(0, 200).replace(/\s+/g, ' ')}`, res.status);
    try { return JSON.parse(text); } catch { throw new DiscoveryError('invalid', `${shown} did not answer JSON`); }
  } catch (e) {
    if (e instanceof DiscoveryError) throw e;
    if (timeout.aborted) throw new DiscoveryError('timeout', `${shown} did not finish within ${opts.timeoutMs} ms`);
    throw new DiscoveryError('network', `${shown}: ${(e as Error).message}`);
  }
}

/**
 * The URL and headers of a GET to `path` (relative to the provider's base URL, or absolute) with the
 * provider's declared headers, query and credentials, signed when the provider signs its requests.
 */
export function providerGet(p: Provider, path: string, query: Record<string, string> = {}): { url: string; headers: Record<string, string> } {
  const url = new URL(path.startsWith('http') ? path : `${p.baseUrl}${path}`);
  for (const [k, v] of new URLSearchParams(p.query)) url.searchParams.set(k, v);
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
  const headers: Record<string, string> = { ...p.headers };
  const a = p.auth;
  if (p.apiKey) {
    if (a.type === 'bearer') headers.authorization = `Bearer ${p.apiKey}`;
    else if (a.type === 'header') headers[a.name.toLowerCase()] = `${a.prefix}${p.apiKey}`;
    else if (a.type === 'query') url.searchParams.set(a.name, p.apiKey);
  }
  if (a.type === 'transform') Object.assign(headers, TRANSFORMS[a.transform]!.apply({ method: 'GET', url: url.toString(), headers, body: '' }, a.options));
  return { url: url.toString(), headers };
}

/**
 * Whether the provider has credentials to list models with (a key, a signing transform with a key id, or no auth at all).
 * Stricter than the router's canAuthenticate for signing transforms: a listing is signed at once, so
 * only keys named in the provider's options count, not credentials the chain may load later.
 */
export function hasCredentials(p: Provider): boolean {
  if (p.auth.type === 'transform') return Boolean(p.auth.options.access_key_id && p.auth.options.secret_access_key);
  return canAuthenticate(p.auth, p.apiKey, {});
}
