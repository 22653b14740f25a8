// Measured latency and error rate per provider (exponentially weighted over recent attempts), fed
// by every routed request's attempts; policies read them as candidate.latency_ms / error_rate.
import type { AttemptRecord } from '../store/types.ts';

type Stat = { latency: number | null; errors: number };

/** Weight of the newest attempt: about the last 20 attempts dominate. */
const ALPHA = 0.1;

export class ProviderStats {
  readonly #m = new Map<string, Stat>();

  observe(attempts: readonly AttemptRecord[]): void {
    for (const a of attempts) {
      let s = this.#m.get(a.provider);
      if (!s) { s = { latency: null, errors: 0 }; this.#m.set(a.provider, s); }
      const failed = a.error !== null && a.error !== 'client disconnected';
      s.errors = s.errors * (1 - ALPHA) + (failed ? ALPHA : 0);
      if (!failed) s.latency = s.latency === null ? a.latencyMs : s.latency * (1 - ALPHA) + a.latencyMs * ALPHA;
    }
  }

  latencyMs(provider: string): number | null {
    const l = this.#m.get(provider)?.latency;
    return l === undefined || l === null ? null : Math.round(l);
  }

  errorRate(provider: string): number { return this.#m.get(provider)?.errors ?? 0; }

  snapshot(): Record<string, { latency_ms: number | null; error_rate: number }> {
    return Object.fromEntries([...this.#m].map(([p, s]) => [p, { latency_ms: s.latency === null ? null : Math.round(s.latency), error_rate: +s.errors.toFixed(4) }]));
  }
}
