// A minimal Prometheus registry: counters, gauges, histograms and exact-decimal counters with labels,
// rendered in the text exposition format (version 0.0.4). No dependencies, no per-request allocation beyond the series key.
import { DecimalSum } from '../catalog/decimal.ts';

export type Labels<L extends string> = { readonly [K in L]: string };
type Sample = { suffix: string; labels: string; value: string };

export const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

const escapeLabel = (v: string): string => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
const escapeHelp = (v: string): string => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
export const formatValue = (v: number): string =>
  Number.isNaN(v) ? 'NaN' : v === Infinity ? '+Inf' : v === -Infinity ? '-Inf' : String(v);

const NAME_RE = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_RE = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** One metric family: a name, a type and series keyed by their label values in declared order. */
abstract class Family<L extends string, S> {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly L[];
  abstract readonly type: 'counter' | 'gauge' | 'histogram';
  protected readonly series = new Map<string, { labels: string; state: S }>();
  readonly #maxSeries: number;

  constructor(name: string, help: string, labelNames: readonly L[], maxSeries: number) {
    if (!NAME_RE.test(name)) throw new Error(`invalid metric name ${name}`);
    for (const l of labelNames) if (!LABEL_RE.test(l) || l === 'le') throw new Error(`invalid label name ${l} on ${name}`);
    this.name = name; this.help = help; this.labelNames = labelNames; this.#maxSeries = maxSeries;
  }

  protected abstract init(): S;

  /**
   * The series for these label values. Beyond maxSeries new combinations share one series whose labels
   * are all "_other", so a client sending random model names cannot grow memory without bound.
   */
  protected get(labels: Labels<L> | undefined): S {
    const names = this.labelNames;
    let key = '';
    for (let i = 0; i < names.length; i++) key += i === 0 ? (labels ? labels[names[i]!] : '') : `\u0000${labels ? labels[names[i]!] : ''}`;
    const s = this.series.get(key);
    if (s) return s.state;
    const values = names.map((n) => (labels ? labels[n] : ''));
    return this.#create(key, values);
  }

  #create(key: string, values: string[]): S {
    if (this.series.size >= this.#maxSeries) {
      values.fill('_other');
      key = values.join('\u0000');
      const s = this.series.get(key);
      if (s) return s.state;
    }
    const s = { labels: this.labelNames.map((n, i) => `${n}="${escapeLabel(values[i]!)}"`).join(','), state: this.init() };
    this.series.set(key, s);
    return s.state;
  }

  protected abstract samples(): Sample[];

  render(): string {
    const lines = [`# HELP ${this.name} ${escapeHelp(this.help)}`, `# TYPE ${this.name} ${this.type}`];
    for (const s of this.samples()) lines.push(`${this.name}${s.suffix}${s.labels ? `{${s.labels}}` : ''} ${s.value}`);
    return lines.join('\n');
  }
}

export class Counter<L extends string = never> extends Family<L, { v: number }> {
  readonly type = 'counter' as const;
  protected init(): { v: number } { return { v: 0 }; }
  inc(labels?: Labels<L>, by = 1): void {
    increase(this.name, this.get(labels), by);
  }
  /** The series for these labels, resolved once: callers on the hot path keep it and skip the lookup. */
  bind(labels?: Labels<L>): { inc(by?: number): void } {
    const state = this.get(labels);
    const name = this.name;
    return { inc(by = 1) { increase(name, state, by); } };
  }
  protected samples(): Sample[] { return [...this.series.values()].map((s) => ({ suffix: '', labels: s.labels, value: formatValue(s.state.v) })); }
}

/** A counter of exact decimal amounts (money): sums decimal strings and renders the exact sum. */
export class DecimalCounter<L extends string = never> extends Family<L, DecimalSum> {
  readonly type = 'counter' as const;
  protected init(): DecimalSum { return new DecimalSum(); }
  add(labels: Labels<L> | undefined, amount: string): void {
    addAmount(this.name, this.get(labels), amount);
  }
  bind(labels?: Labels<L>): { add(amount: string): void } {
    const sum = this.get(labels);
    const name = this.name;
    return { add(amount) { addAmount(name, sum, amount); } };
  }
  protected samples(): Sample[] { return [...this.series.values()].map((s) => ({ suffix: '', labels: s.labels, value: s.state.toString() })); }
}

export class Gauge<L extends string = never> extends Family<L, { v: number }> {
  readonly type = 'gauge' as const;
  protected init(): { v: number } { return { v: 0 }; }
  set(labels: Labels<L> | undefined, v: number): void { this.get(labels).v = v; }
  inc(labels?: Labels<L>, by = 1): void { this.get(labels).v += by; }
  dec(labels?: Labels<L>, by = 1): void { this.get(labels).v -= by; }
  protected samples(): Sample[] { return [...this.series.values()].map((s) => ({ suffix: '', labels: s.labels, value: formatValue(s.state.v) })); }
}

export class Histogram<L extends string = never> extends Family<L, { counts: number[]; sum: number; count: number }> {
  readonly type = 'histogram' as const;
  readonly buckets: readonly number[];
  constructor(name: string, help: string, labelNames: readonly L[], buckets: readonly number[], maxSeries: number) {
    super(name, help, labelNames, maxSeries);
    this.buckets = [...buckets].sort((a, b) => a - b);
  }
  protected init(): { counts: number[]; sum: number; count: number } { return { counts: this.buckets.map(() => 0), sum: 0, count: 0 }; }
  observe(labels: Labels<L> | undefined, v: number): void {
    record(this.buckets, this.get(labels), v);
  }
  bind(labels?: Labels<L>): { observe(v: number): void } {
    const state = this.get(labels);
    const buckets = this.buckets;
    return { observe(v) { record(buckets, state, v); } };
  }
  protected samples(): Sample[] {
    const out: Sample[] = [];
    for (const { labels, state } of this.series.values()) {
      const sep = labels ? ',' : '';
      let cum = 0;
      this.buckets.forEach((b, i) => { cum += state.counts[i]!; out.push({ suffix: '_bucket', labels: `${labels}${sep}le="${formatValue(b)}"`, value: String(cum) }); });
      out.push({ suffix: '_bucket', labels: `${labels}${sep}le="+Inf"`, value: String(state.count) });
      out.push({ suffix: '_sum', labels, value: formatValue(state.sum) });
      out.push({ suffix: '_count', labels, value: String(state.count) });
    }
    return out;
  }
}

function increase(name: string, state: { v: number }, by: number): void {
  if (!(by >= 0)) throw new Error(`counter ${name} can only increase`);
  state.v += by;
}

function addAmount(name: string, sum: DecimalSum, amount: string): void {
  if (amount.startsWith('-')) throw new Error(`counter ${name} can only increase`);
  sum.add(amount);
}

function record(buckets: readonly number[], s: { counts: number[]; sum: number; count: number }, v: number): void {
  for (let i = 0; i < buckets.length; i++) if (v <= buckets[i]!) { s.counts[i]! += 1; break; }
  s.sum += v;
  s.count += 1;
}

/** A metric whose samples are read at render time (e.g. the writer's queue depth). */
class Collected {
  readonly name: string; readonly help: string; readonly type: 'counter' | 'gauge'; readonly #read: () => number | null;
  constructor(name: string, help: string, type: 'counter' | 'gauge', read: () => number | null) {
    if (!NAME_RE.test(name)) throw new Error(`invalid metric name ${name}`);
    this.name = name; this.help = help; this.type = type; this.#read = read;
  }
  render(): string {
    const v = this.#read();
    const head = `# HELP ${this.name} ${escapeHelp(this.help)}\n# TYPE ${this.name} ${this.type}`;
    return v === null ? head : `${head}\n${this.name} ${formatValue(v)}`;
  }
}

export class Registry {
  readonly #metrics = new Map<string, { render(): string }>();
  readonly #maxSeries: number;
  constructor(opts: { maxSeries?: number } = {}) { this.#maxSeries = opts.maxSeries ?? 2000; }

  #add<T extends { render(): string }>(name: string, m: T): T {
    if (this.#metrics.has(name)) throw new Error(`metric ${name} registered twice`);
    this.#metrics.set(name, m);
    return m;
  }
  counter<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []): Counter<L> {
    return this.#add(name, new Counter<L>(name, help, labelNames, this.#maxSeries));
  }
  decimalCounter<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []): DecimalCounter<L> {
    return this.#add(name, new DecimalCounter<L>(name, help, labelNames, this.#maxSeries));
  }
  gauge<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []): Gauge<L> {
    return this.#add(name, new Gauge<L>(name, help, labelNames, this.#maxSeries));
  }
  histogram<L extends string = never>(name: string, help: string, labelNames: readonly L[], buckets: readonly number[]): Histogram<L> {
    return this.#add(name, new Histogram<L>(name, help, labelNames, buckets, this.#maxSeries));
  }
  /** `read` returns the current value, or null to render no sample (e.g. no writer attached yet). */
  collected(name: string, help: string, type: 'counter' | 'gauge', read: () => number | null): void {
    this.#add(name, new Collected(name, help, type, read));
  }

  /** Text exposition of every metric, in registration order, ending with a newline. */
  render(): string {
    return [...this.#metrics.values()].map((m) => m.render()).join('\n') + '\n';
  }
}
