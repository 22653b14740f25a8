// The providers as this replica's router sees them now: whether attempts skip one (ejected, and until
// when), its failures in a row, and the measured latency and error rate policies read as a candidate's
// latency_ms and error_rate (src/router/provider-stats.ts). Every configured provider is listed, those
// attempts skip first, then by error rate; GET /admin/api/v1/router/providers serves it to the
// dashboard's Router page. From memory only: no store read, nothing shared between replicas but the
// ejections Redis relays (src/router/health-share.ts).
import type { UpstreamHealth } from '../engine/health.ts';
import type { ProviderStats } from './provider-stats.ts';

export type ProviderNow = {
  provider: string; ejected: boolean; ejected_until: string | null; consecutive_failures: number;
  /** Exponentially weighted over about the last 20 attempts; null before the first answer. */
  latency_ms: number | null; error_rate: number;
};

export function providersNow(ids: Iterable<string>, health: UpstreamHealth, stats: ProviderStats | null): ProviderNow[] {
  const h = health.snapshot();
  const m = stats?.snapshot() ?? {};
  const out: ProviderNow[] = [];
  for (const id of new Set([...ids, ...Object.keys(h)])) {
    const x = h[id];
    out.push({
      provider: id, ejected: x?.ejected ?? false, ejected_until: x?.ejected_until ?? null, consecutive_failures: x?.consecutive_failures ?? 0,
      latency_ms: m[id]?.latency_ms ?? null, error_rate: m[id]?.error_rate ?? 0,
    });
  }
  return out.sort((a, b) => Number(b.ejected) - Number(a.ejected) || b.error_rate - a.error_rate || b.consecutive_failures - a.consecutive_failures || a.provider.localeCompare(b.provider));
}
