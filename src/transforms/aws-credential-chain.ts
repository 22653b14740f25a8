// One AWS credential chain with its cache: what request signing reads synchronously (`current()`),
// and what a request awaits when nothing valid is cached (`ready()`): one fetch in flight at a time,
// shared by every request that needs it, never holding the event loop.
import { REFRESH_BEFORE_MS, resolveLocal, resolveRemote, type AwsCredentials, type Env } from './aws-credentials.ts';

/** After a failed fetch, requests fail at once for this long instead of each asking the endpoint again. */
export const FAILURE_HOLD_MS = 1000;
/** The whole chain (files, credential_process, container endpoint, IMDS) gets this long per fetch. */
export const FETCH_TIMEOUT_MS = 6000;

const valid = (c: AwsCredentials | null, now: number): c is AwsCredentials => c !== null && (c.expiresAt === undefined || now < c.expiresAt);

export class AwsCredentialChain {
  #cached: AwsCredentials | null = null;
  #inFlight: Promise<AwsCredentials> | null = null;
  #failure: { error: Error; until: number } | null = null;
  readonly #env: Env;
  readonly #profile: string | undefined;
  readonly #now: () => number;
  /** Fetches started (for tests and /health). */
  fetches = 0;

  constructor(env: Env, profile?: string, now: () => number = Date.now) {
    this.#env = env; this.#profile = profile; this.#now = now;
  }

  /**
   * The cached credentials while they are valid, else null (then await ready()). Inside the refresh
   * window the current value is returned while a refresh runs in the background.
   */
  current(): AwsCredentials | null {
    const c = this.#cached;
    const now = this.#now();
    if (!valid(c, now)) return null;
    if (c.expiresAt !== undefined && now >= c.expiresAt - REFRESH_BEFORE_MS) this.refresh();
    return c;
  }

  /**
   * null when current() has credentials (the usual case: nothing to await); else a promise that
   * resolves once they are cached, or rejects with why none could be had. Concurrent callers share one fetch.
   */
  ready(): Promise<AwsCredentials> | null {
    if (this.current() !== null) return null;
    const f = this.#failure;
    if (f && this.#now() < f.until) return Promise.reject(f.error);
    return this.#fetch();
  }

  /** Starts a fetch in the background (at start, on reload, before expiry); the cached value serves until it lands. */
  refresh(): void {
    this.#fetch().catch(() => { /* kept: the current value serves until it expires; ready() reports the failure */ });
  }

  #fetch(): Promise<AwsCredentials> {
    if (this.#inFlight) return this.#inFlight;
    this.fetches++;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer from the credential sources within ${FETCH_TIMEOUT_MS} ms`)), FETCH_TIMEOUT_MS);
      timer.unref();
    });
    const p = Promise.race([this.#resolve(), deadline]).then((c) => {
      this.#cached = c;
      this.#failure = null;
      return c;
    }, (e: unknown) => {
      const error = e instanceof Error ? e : new Error(String(e));
      this.#failure = { error, until: this.#now() + FAILURE_HOLD_MS };
      throw error;
    }).finally(() => { clearTimeout(timer); this.#inFlight = null; });
    this.#inFlight = p;
    return p;
  }

  async #resolve(): Promise<AwsCredentials> {
    const c = (await resolveLocal(this.#env, this.#profile)) ?? (await resolveRemote(this.#env));
    if (!c) throw new Error('none in the environment, the shared files, the container endpoint or instance metadata');
    if (c.expiresAt !== undefined && this.#now() >= c.expiresAt) throw new Error(`the credentials from ${c.source} have already expired`);
    return c;
  }
}
