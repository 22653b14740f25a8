// GET /usage (the usage page's one call) and GET /usage/export (the same view as CSV or JSONL, every group).
import { invalidParam } from '../../gateway-error.ts';
import { autoBucket, isTimeZone } from '../../dashboard/rollup-math.ts';
import { BUCKETS, USAGE_GROUPS, type Bucket, type UsageGroup } from '../../dashboard/ui/api-types.ts';
import { usageExport, usageReport, type UsageContext, type UsageQuery } from '../../dashboard/usage.ts';
import { sendApiJson } from './context.ts';
import { streamExport } from './export.ts';
import { int, list, oneOf, range, single } from './params.ts';
import type { ApiCall, ApiRoute } from './router.ts';

const DAY = 86_400_000;

/** A time series' `tz` (an IANA zone, UTC by default) and `bucket` (the finest readable one for the range by default). */
export function seriesParams(q: URLSearchParams, from: number, to: number): { tz: string; bucket: Bucket } {
  const tz = single(q, 'tz') || 'UTC';
  if (!isTimeZone(tz)) throw invalidParam('tz', 'tz must be an IANA time zone, like Europe/Berlin');
  return { tz, bucket: oneOf<Bucket>(q, 'bucket', BUCKETS, autoBucket(to - from)) };
}

export function usageQuery(q: URLSearchParams): UsageQuery {
  const { from, to } = range(q, 7 * DAY);
  return {
    from, to, ...seriesParams(q, from, to), group: oneOf<UsageGroup>(q, 'group', USAGE_GROUPS, 'none'),
    top: int(q, 'top', 1, 50, 8),
    filter: { keys: list(q, 'key'), models: list(q, 'model'), providers: list(q, 'provider'), routes: list(q, 'route'), users: list(q, 'user') },
  };
}

async function usageContext(c: ApiCall): Promise<UsageContext> {
  const users = new Map((await c.d.users.list()).map((u) => [u.id, u.email]));
  const owners = await c.d.users.owners();
  return {
    owners,
    label: (group, v) => {
      if (group === 'key') return v === '' ? '(no key)' : c.d.keyName(v) ?? v;
      if (group === 'user') return v === '' ? '(no owner)' : users.get(v) ?? v;
      return v === '' ? '(none)' : v;
    },
  };
}

const EXPORT_COLUMNS = ['bucket', 'group', 'label', 'requests', 'errors', 'input_tokens', 'output_tokens', 'cache_read_tokens', 'cache_write_tokens', 'reasoning_tokens', 'cost_usd', 'error_rate', 'latency_p50_ms', 'latency_p95_ms', 'latency_p99_ms', 'ttft_p50_ms', 'ttft_p95_ms'] as const;

export function usageApi(): ApiRoute[] {
  return [
    {
      method: 'GET', path: '/usage', who: 'any',
      handler: async (c) => {
        const q = usageQuery(c.query);
        try {
          const report = await usageReport(c.d.store.sql, q, c.access, await usageContext(c));
          if (q.group === 'key') {
            // A key the names did not know yet (made since by the CLI or another replica) was labelled by its id.
            await c.d.nameKeys(report.groups.map((g) => g.group));
            for (const g of report.groups) if (g.group !== '') g.label = c.d.keyName(g.group) ?? g.group;
          }
          sendApiJson(c.res, 200, report);
        } catch (e) {
          if (e instanceof RangeError) throw invalidParam('bucket', 'too many buckets for this range (at most 2000): choose a larger bucket');
          throw e;
        }
      },
    },
    {
      method: 'GET', path: '/usage/export', who: 'any',
      handler: async (c) => {
        const q = usageQuery(c.query);
        const format = oneOf(c.query, 'format', ['csv', 'jsonl'] as const, 'csv');
        const rows = usageExport(c.d.store.sql, q, c.access, await usageContext(c));
        async function* flat(): AsyncGenerator<Record<string, unknown>> {
          for await (const r of rows) {
            yield {
              bucket: r.bucket, group: r.group, label: r.label, requests: r.requests, errors: r.errors, input_tokens: r.input_tokens,
              output_tokens: r.output_tokens, cache_read_tokens: r.cache_read_tokens, cache_write_tokens: r.cache_write_tokens,
              reasoning_tokens: r.reasoning_tokens, cost_usd: r.cost_usd, error_rate: r.error_rate, latency_p50_ms: r.latency_ms.p50,
              latency_p95_ms: r.latency_ms.p95, latency_p99_ms: r.latency_ms.p99, ttft_p50_ms: r.ttft_ms.p50, ttft_p95_ms: r.ttft_ms.p95,
            };
          }
        }
        await streamExport(c.res, format, `usage-${q.group}-${q.bucket}`, EXPORT_COLUMNS, flat());
      },
    },
  ];
}
