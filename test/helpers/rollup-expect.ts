// What a usage report must say, computed the slow way from the raw records as stored (read back from
// the database), for test/dashboard-rollups.test.ts: every rollup answer is checked against this.
import { addDecimal } from '../../src/catalog/decimal.ts';
import { bucketOf } from '../../src/store/rollup-cells.ts';
import type { Row } from '../../src/store/rows.ts';
import type { SqlRunner } from '../../src/store/sql-runner.ts';

export type Raw = {
  id: string; hour: number; key: string; model: string; provider: string; route: string; status: number; latency: number; ttft: number | null;
  input: number; output: number; cost: string;
};

export async function rawRecords(sql: SqlRunner): Promise<Raw[]> {
  const rows = await sql.all('SELECT id, created_at, key_id, route, requested_model, served_model, provider, status, latency_ms, ttft_ms, input_tokens, output_tokens, cost_usd FROM inferences');
  return rows.map((r: Row) => ({
    id: String(r.id), hour: Math.floor(Date.parse(r.created_at instanceof Date ? r.created_at.toISOString() : String(r.created_at)) / 3_600_000) * 3_600_000,
    key: r.key_id === null ? '' : String(r.key_id), model: String(r.served_model ?? r.requested_model), provider: r.provider === null ? '' : String(r.provider),
    route: String(r.route), status: Number(r.status), latency: Number(r.latency_ms), ttft: r.ttft_ms === null ? null : Number(r.ttft_ms),
    input: Number(r.input_tokens), output: Number(r.output_tokens), cost: String(r.cost_usd),
  }));
}

export type Agg = { requests: number; errors: number; input: number; output: number; cost: string; lat: number[]; ttft: number[] };
export const emptyAgg = (): Agg => ({ requests: 0, errors: 0, input: 0, output: 0, cost: '0', lat: new Array(20).fill(0), ttft: new Array(20).fill(0) });

export function add(a: Agg, r: Raw): void {
  a.requests++; if (r.status >= 400) a.errors++; a.input += r.input; a.output += r.output; a.cost = addDecimal(a.cost, r.cost);
  const lb = bucketOf(r.latency); if (lb >= 0) a.lat[lb]!++;
  if (r.ttft !== null) { const tb = bucketOf(r.ttft); if (tb >= 0) a.ttft[tb]!++; }
}

const HOUR = 3_600_000;
/**
 * Bucket of each record as the report defines it: the range rounded out to whole hours, bucket i from
 * the hour its start falls in (rounded up; the first from the range's start) to the next bucket's.
 */
export function bucketOfRecord(hour: number, from: number, to: number, starts: readonly number[]): number {
  const lo = Math.floor(from / HOUR) * HOUR; const hi = Math.ceil(to / HOUR) * HOUR;
  if (hour < lo || hour >= hi) return -1;
  let b = 0;
  for (let i = 1; i < starts.length; i++) if (hour >= Math.ceil(starts[i]! / HOUR) * HOUR) b = i;
  return b;
}
