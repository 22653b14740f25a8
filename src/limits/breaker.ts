// A circuit breaker for a dependency on the request path (Redis for the limiter): after a failure it
// opens, so requests stop waiting on a dead or hung server and take the fallback at once; a probe in
// the background (never a request) decides when it closes again, with a back-off that doubles.
// Its state (closed, open, half-open while a probe runs), since when and the last error are kept
// for /health and /metrics.

export type BreakerState = 'closed' | 'open' | 'half-open';

/** What /health shows: no secrets (error text is cleaned by the caller's `describe`). */
export type BreakerStatus = {
  state: BreakerState;
  /** When the current state began (ms since epoch). */
  since: number;
  lastError: string | null;
  lastErrorAt: number | null;
  /** Times it opened since start. */
  opened: number;
};

export type BreakerOptions = {
  /** First wait before probing after a failure; doubles after each failed probe. */
  baseMs?: number;
  maxMs?: number;
  /** Checks the dependency (and does whatever must precede using it again); rejects while it is down. */
  probe: () => Promise<void>;
  onChange?: (state: BreakerState) => void;
  /** The text kept as the last error (strip anything secret there); default: the error's message. */
  describe?: (err: unknown) => string;
  now?: () => number;
};

const MAX_ERROR_CHARS = 300;

export class Breaker {
  readonly #baseMs: number;
  readonly #maxMs: number;
  readonly #probe: () => Promise<void>;
  readonly #onChange: (state: BreakerState) => void;
  readonly #describe: (err: unknown) => string;
  readonly #now: () => number;
  #state: BreakerState = 'closed';
  #since: number;
  #lastError: string | null = null;
  #lastErrorAt: number | null = null;
  #opened = 0;
  #waitMs: number;
  #timer: NodeJS.Timeout | null = null;
  #closed = false;

  constructor(o: BreakerOptions) {
    this.#baseMs = o.baseMs ?? 250;
    this.#maxMs = o.maxMs ?? 5000;
    this.#probe = o.probe;
    this.#onChange = o.onChange ?? (() => {});
    this.#describe = o.describe ?? ((e) => (e instanceof Error ? e.message : String(e)));
    this.#now = o.now ?? Date.now;
    this.#since = this.#now();
    this.#waitMs = this.#baseMs;
  }

  /** True while requests should not touch the dependency (open, or half-open: a probe decides). */
  get isOpen(): boolean { return this.#state !== 'closed'; }

  status(): BreakerStatus {
    return { state: this.#state, since: this.#since, lastError: this.#lastError, lastErrorAt: this.#lastErrorAt, opened: this.#opened };
  }

  #set(state: BreakerState): void {
    if (this.#state === state) return;
    this.#state = state;
    this.#since = this.#now();
    if (state === 'open') this.#opened++;
    try { this.#onChange(state); } catch { /* an observer must not break the breaker */ }
  }

  #remember(err: unknown): void {
    if (err === undefined) return;
    let text: string;
    try { text = this.#describe(err); } catch { text = 'error'; }
    this.#lastError = text.length > MAX_ERROR_CHARS ? `${text.slice(0, MAX_ERROR_CHARS)}...` : text;
    this.#lastErrorAt = this.#now();
  }

  /** A call failed (or the connection dropped): open, and probe after the current wait. */
  trip(err?: unknown): void {
    if (this.#closed) return;
    this.#remember(err);
    if (this.#state === 'half-open') return; // the running probe decides
    this.#set('open');
    if (!this.#timer) this.#schedule(this.#waitMs);
  }

  /** The dependency says it is back (a reconnect): probe now rather than after the wait. */
  probeSoon(): void {
    if (this.#state !== 'open' || this.#closed) return;
    if (this.#timer) { clearTimeout(this.#timer); this.#timer = null; }
    this.#schedule(0);
  }

  #schedule(ms: number): void {
    this.#timer = setTimeout(() => { this.#timer = null; void this.#run(); }, ms);
    this.#timer.unref();
  }

  async #run(): Promise<void> {
    if (this.#closed) return;
    this.#set('half-open');
    try {
      await this.#probe();
      this.#waitMs = this.#baseMs;
      if (!this.#closed) this.#set('closed');
    } catch (err) {
      this.#remember(err);
      this.#waitMs = Math.min(this.#maxMs, this.#waitMs * 2);
      if (this.#closed) return;
      this.#set('open');
      this.#schedule(this.#waitMs);
    }
  }

  close(): void {
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
  }
}
