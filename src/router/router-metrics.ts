// What the router shows at /metrics: each routed request's decision (the model chosen first and why,
// or the constraints that refused it), how long deciding took, training passes, the state version and
// the queue of decisions waiting to be recorded (and those dropped).
// Series are bound once per model and constraint, so a routed request adds two clock reads, a map
// lookup and two increments.
import type { GatewayMetrics, RouterGauges } from '../metrics/gateway.ts';
import type { Decision } from './decision.ts';
import type { TrainOutcome } from './learning.ts';

type Inc = { inc(by?: number): void };
type Reasons = { utility: Inc; explored: Inc; affinity: Inc };

/** A constraint name of Decision.excludedBy as a bounded label: policy rules (`policy:<rule>`) fold into `policy`. */
const constraintLabel = (name: string): string => (name.startsWith('policy:') ? 'policy' : name);

export class RouterMetrics {
  readonly #m: GatewayMetrics;
  readonly #models = new Map<string, Reasons>();
  readonly #constraints = new Map<string, Inc>();
  readonly #seconds: { observe(v: number): void };

  constructor(m: GatewayMetrics, gauges: RouterGauges) {
    this.#m = m;
    this.#seconds = m.routerDecisionSeconds.bind();
    m.attachRouter(gauges);
  }

  /** A routed request's decision, `startedAt` its performance.now() when the body was read. */
  decided(d: Decision, startedAt: number): void {
    const c = d.plan.length > 0 ? d.chosen : null;
    if (c === null) { this.#refused(d); return; }
    this.#seconds.observe((performance.now() - startedAt) / 1000);
    let r = this.#models.get(c.id);
    if (r === undefined) {
      const t = this.#m.routerDecisionsTotal;
      r = { utility: t.bind({ model: c.id, reason: 'utility' }), explored: t.bind({ model: c.id, reason: 'explored' }), affinity: t.bind({ model: c.id, reason: 'affinity' }) };
      this.#models.set(c.id, r);
    }
    (d.explored ? r.explored : d.affinity === c.id ? r.affinity : r.utility).inc();
  }

  #refused(d: Decision): void {
    let any = false, policy = false;
    for (const name in d.excludedBy) {
      const label = constraintLabel(name);
      if (label === 'policy') { if (policy) continue; policy = true; }
      any = true;
      this.#constraint(label).inc();
    }
    if (!any) this.#constraint('none').inc();
  }

  #constraint(label: string): Inc {
    let c = this.#constraints.get(label);
    if (c === undefined) this.#constraints.set(label, c = this.#m.routerNoRouteTotal.bind({ constraint: label }));
    return c;
  }

  trained(result: TrainOutcome): void { this.#m.routerTrainingRunsTotal.inc({ result }); }
}
