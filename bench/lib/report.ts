// Result shapes of bench/overhead.ts and their printing: one table per scenario, the ratios,
// and a closing list of the targets with the measured figure beside each.
import type { Percentiles } from './stats.ts';
import { fmt, ratio } from './stats.ts';
import { GATEWAYS, type Scenario, type SystemName } from './scenarios.ts';

export type SystemResult = {
  name: SystemName;
  reason?: string;
  /** Closed loop: requests/s per round, their median, CPU µs per request of the system's own process. */
  rps: number[];
  rpsMedian: number;
  cpuUsPerReq: number;
  closedP50: number;
  closedP99: number;
  /** Open loop at the fixed rate, samples pooled over the rounds. */
  open?: { latency: Percentiles; ttft: Percentiles; achievedRps: number };
  /** Open-loop figure minus the direct figure, ms. */
  added?: { p50: number; p99: number; ttftP50: number; ttftP99: number };
  errors: number;
  errorSample?: string;
};

export type ScenarioResult = {
  scenario: Pick<Scenario, 'name' | 'stream' | 'translated' | 'description'>;
  systems: SystemResult[];
  /** a/b of median requests/s (higher = a faster). */
  ratios: Record<string, number>;
  /** a/b of median CPU microseconds per request of each system's own process (lower = a cheaper). */
  cpuRatios: Record<string, number>;
};

/** Ratios of one figure between the systems that produced it, named `a/b`. */
export function computeRatios(systems: SystemResult[], figure: 'rpsMedian' | 'cpuUsPerReq'): Record<string, number> {
  const v = new Map(systems.filter((s) => !s.reason).map((s) => [s.name, s[figure]]));
  const pairs: [SystemName, SystemName][] = [['undici', 'http-proxy-3'], ['undici', 'http-proxy-3-noagent'], ['http-proxy-3', 'http-proxy-3-noagent']];
  if (figure === 'rpsMedian') pairs.push(['http-proxy-3', 'direct'], ['undici', 'direct']);
  for (const g of GATEWAYS) pairs.push([g, 'http-proxy-3'], [g, 'undici'], [g, 'http-proxy-3-noagent']);
  if (figure === 'rpsMedian') for (const g of GATEWAYS) pairs.push([g, 'direct']);
  pairs.push(['gateway', 'gateway-base']);
  const out: Record<string, number> = {};
  for (const [a, b] of pairs) if (v.has(a) && v.has(b)) out[`${a}/${b}`] = ratio(v.get(a), v.get(b));
  return out;
}

function pad(s: string, n: number, left = false): string {
  return left ? s.padEnd(n) : s.padStart(n);
}

export function printScenario(r: ScenarioResult, rate: number): void {
  const { scenario: sc } = r;
  console.log(`\n=== ${sc.name}  (${sc.description})`);
  const head = ['system', 'rps(med)', 'min..max', 'cpu us/req', 'load p50', 'load p99', `@${rate}/s p50`, 'p99', '+p50', '+p99'];
  if (sc.stream || sc.translated) head.push('ttft p50', 'ttft p99', '+ttft p50');
  head.push('errors');
  const widths = head.map((h, i) => (i === 0 ? 21 : Math.max(9, h.length)));
  console.log(head.map((h, i) => pad(h, widths[i]!, i === 0)).join(' '));
  for (const s of r.systems) {
    if (s.reason) { console.log(`${pad(s.name, 21, true)} not available: ${s.reason}`); continue; }
    const o = s.open;
    const cells = [s.name, fmt(s.rpsMedian, 0), `${fmt(Math.min(...s.rps), 0)}..${fmt(Math.max(...s.rps), 0)}`, fmt(s.cpuUsPerReq, 0),
      fmt(s.closedP50), fmt(s.closedP99), fmt(o?.latency.p50 ?? NaN), fmt(o?.latency.p99 ?? NaN),
      s.name === 'direct' ? '' : fmt(s.added?.p50 ?? NaN), s.name === 'direct' ? '' : fmt(s.added?.p99 ?? NaN)];
    if (sc.stream || sc.translated) cells.push(fmt(o?.ttft.p50 ?? NaN), fmt(o?.ttft.p99 ?? NaN), s.name === 'direct' ? '' : fmt(s.added?.ttftP50 ?? NaN));
    cells.push(String(s.errors));
    console.log(cells.map((c, i) => pad(c, widths[i]!, i === 0)).join(' '));
    if (s.errorSample) console.log(`${' '.repeat(22)}first error: ${s.errorSample.replace(/\s+/g, ' ').slice(0, 200)}`);
  }
  const ratios = Object.entries(r.ratios).map(([k, v]) => `${k} ${fmt(v)}x`);
  if (ratios.length) console.log(`ratios (median rps): ${ratios.join(', ')}`);
  const cpu = Object.entries(r.cpuRatios).map(([k, v]) => `${k} ${fmt(v)}x`);
  if (cpu.length) console.log(`ratios (cpu us/req): ${cpu.join(', ')}`);
}

/** `note`: the same figure of the baseline in this run, so a target the machine itself cannot meet shows as such. */
type Check = { scenario: string; what: string; value: number; target: string; ok: boolean; note?: string };

/** The targets from the task and the issues, checked against this run's figures. */
export function checkTargets(results: ScenarioResult[]): Check[] {
  const checks: Check[] = [];
  for (const r of results) {
    const baseline = r.systems.find((s) => s.name === 'http-proxy-3' && !s.reason);
    for (const s of r.systems) {
      if (!GATEWAYS.includes(s.name) || s.reason) continue;
      const rpsRatio = r.ratios[`${s.name}/http-proxy-3`] ?? NaN;
      const min = r.scenario.translated ? 0.6 : 0.85;
      checks.push({ scenario: r.scenario.name, what: `${s.name}/http-proxy-3 rps`, value: rpsRatio, target: `>= ${min}x`, ok: rpsRatio >= min });
      if (r.scenario.translated) {
        const v = s.added?.ttftP50 ?? NaN;
        checks.push({ scenario: r.scenario.name, what: `${s.name} added TTFT p50 ms`, value: v, target: '< 1 ms', ok: v < 1 });
      } else {
        const v = s.added?.p99 ?? NaN;
        const base = baseline?.added?.p99;
        checks.push({ scenario: r.scenario.name, what: `${s.name} added p99 ms`, value: v, target: '< 1 ms', ok: v < 1,
          ...(base === undefined ? {} : { note: `(http-proxy-3 adds ${fmt(base)} ms)` }) });
      }
    }
  }
  return checks;
}

/** Columns of the closing tables; every ratio is still printed per scenario and in the JSON. */
const SUMMARY_KEYS = ['undici/http-proxy-3', 'gateway/http-proxy-3', 'gateway-base/http-proxy-3', 'gateway/gateway-base', 'gateway/undici', 'gateway-auth/http-proxy-3',
  'gateway-auth-pg/http-proxy-3', 'http-proxy-3/http-proxy-3-noagent', 'undici/http-proxy-3-noagent', 'http-proxy-3/direct'];

function printRatioTable(title: string, results: ScenarioResult[], pick: (r: ScenarioResult) => Record<string, number>): void {
  console.log(`\n=== ${title}`);
  const keys = SUMMARY_KEYS.filter((k) => results.some((r) => k in pick(r)));
  if (keys.length === 0) { console.log('(no pair of systems measured)'); return; }
  console.log(pad('scenario', 26, true) + keys.map((k) => pad(k, Math.max(10, k.length + 1))).join(''));
  for (const r of results) {
    console.log(pad(r.scenario.name, 26, true) + keys.map((k) => pad(`${fmt(pick(r)[k] ?? NaN)}x`, Math.max(10, k.length + 1))).join(''));
  }
}

export function printSummary(results: ScenarioResult[]): void {
  printRatioTable('ratios of median requests/s (closed loop; higher = first one faster)', results, (r) => r.ratios);
  printRatioTable('ratios of CPU us per request of the system\'s own process (lower = first one cheaper)', results, (r) => r.cpuRatios);
  const checks = checkTargets(results);
  console.log('\n=== targets');
  if (checks.length === 0) console.log('no gateway figures in this run: targets not checked');
  for (const c of checks) {
    console.log(`${pad(c.scenario, 26, true)}${pad(c.what, 34, true)}${pad(fmt(c.value), 8)}  target ${pad(c.target, 8, true)} ${c.ok ? 'met' : 'MISSED'}${c.note ? `  ${c.note}` : ''}`);
  }
}
