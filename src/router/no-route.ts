// The router's 400 when no candidate qualifies: each constraint, how many candidates it excluded,
// and (up to 8 per constraint) which, with their reason, expected cost and predicted quality.
import { GatewayError } from '../gateway-error.ts';
import { fmt, type Decision, type Ranked } from './decision.ts';

/** The 400 when nothing qualifies: each constraint, how many it excluded, and (up to 8) which, with their estimates. */
export function noRouteError(d: Decision): GatewayError {
  const groups = new Map<string, Ranked[]>();
  for (const r of d.ranked) if (r.excluded) (groups.get(r.excluded.constraint) ?? groups.set(r.excluded.constraint, []).get(r.excluded.constraint)!).push(r);
  const parts: string[] = [];
  for (const [constraint, rs] of groups) {
    const total = d.excludedBy[constraint] ?? rs.length;
    const shown = rs.slice(0, 8).map((r) => `${r.id} (${r.excluded!.reason}; expected $${fmt(r.expectedCostUsd)}, q ${r.q.toFixed(2)})`);
    parts.push(`${constraint} excluded ${total}: ${shown.join('; ')}${total > shown.length ? `; and ${total - shown.length} more` : ''}`);
  }
  const first = [...groups.keys()][0] ?? 'models';
  const param = first.startsWith('capability:') || first.startsWith('policy:') || first.startsWith('key:') ? 'model' : first;
  return new GatewayError('no_route', `no model satisfies the router's constraints. ${parts.join(' | ') || 'no candidates'}. POST /v1/router/rank with the same body shows every estimate.`, { param });
}
