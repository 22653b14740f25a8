// The Router page's text and links (DOM-free, so they are unit tested directly).
import type { RouterFeedbackStat, RouterKind } from './api-types.ts';

const pct = (r: number | null): string => (r === null ? '–' : `${(r * 100).toFixed(1)}%`);

/** "good: 62.5% (n=8)" for booleans, "score: 3.20 (n=5)" for scores; comments only count. */
export function feedbackText(f: RouterFeedbackStat): string {
  if (f.type === 'boolean') return `${f.metric}: ${pct(f.rate)} (n=${f.count})`;
  if (f.type === 'float') return `${f.metric}: ${f.mean === null ? '–' : f.mean.toFixed(2)} (n=${f.count})`;
  return `${f.metric}: ${f.count} comments`;
}

/** The Requests page's routed requests served by `model`, over the Router page's range (its URL state `q`). */
export function requestsLink(model: string, q: Record<string, string>): string {
  const range: Record<string, string> = q.from && q.to ? { from: q.from, to: q.to } : { range: q.range ?? '7d' };
  return `/dashboard/requests?${new URLSearchParams(Object.entries({ ...range, routed: 'true', served: model }).sort(([a], [b]) => (a < b ? -1 : 1)))}`;
}

/** The models the router chose for a prompt kind with their shares: "mockai/alpha 50.0% · mockai/beta 25.0% · 2 more 25.0%". */
export function kindModelsText(k: Pick<RouterKind, 'models' | 'other'>): string {
  const parts = k.models.map((m) => `${m.model} ${pct(m.share)}`);
  if (k.other) parts.push(`${k.other.models} more ${pct(k.other.share)}`);
  return parts.length ? parts.join(' · ') : '–';
}
