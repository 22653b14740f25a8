// The router's decision in the request detail: what it chose and why (the utility it maximised, or
// exploration, or prompt-cache affinity), the plan it tried in order, and the candidates it weighed,
// included with their estimates and excluded with the constraint that excluded them.
import type { RouterDecisionView } from '../api-types.ts';
import { h } from '../dom.ts';
import { compact, usd } from '../format.ts';
import { badge, section, table, textBlock } from '../widgets.ts';

const n = (x: number | null, digits = 4): string => (x === null ? '–' : String(Number(x.toPrecision(digits))));
const money = (x: number | null): string => (x === null ? '–' : usd(String(x)));
/** A record that lists no candidate at all was stored with router.record_candidates: 0. */
const UNLISTED = 'None listed: this gateway stores no candidate list with a decision (router.record_candidates: 0). "Try the router" on the Router page ranks every candidate.';

/** One sentence on why the chosen model won. */
export function whyChosen(d: RouterDecisionView): string {
  if (d.chosen === null) return 'No candidate met the constraints: nothing was routed.';
  if (d.explored) return `${d.chosen} was tried by exploration (a small share of traffic tries candidates other than the best, so the router keeps learning).`;
  if (d.affinity === d.chosen) return `${d.chosen} was preferred for its cached prompt prefix (cheaper and faster to reuse).`;
  if (d.willingness_to_pay === null) return `${d.chosen} had the highest expected quality (${n(d.chosen_quality)}); no willingness to pay was set.`;
  return `${d.chosen} had the highest utility 10 × W × quality − expected cost = 10 × ${d.willingness_to_pay} × ${n(d.chosen_quality)} − ${money(d.chosen_cost_usd)}.`;
}

/** The decision's section; `title` and `rawLabel` name it and its JSON (a recorded decision by default). */
export function routerDecisionSection(d: RouterDecisionView, o: { title?: string; rawLabel?: string } = {}): HTMLElement {
  const excluded = Object.entries(d.excluded_by);
  const shown = d.included.length + d.excluded.length;
  return section(o.title ?? 'Router decision',
    h('p', { 'data-testid': 'router-why' }, whyChosen(d)),
    h('dl', { class: 'facts' },
      ...([
        ['Chosen', d.chosen ?? '–'], ['Candidates', `${compact(d.candidates)} considered${shown < (d.candidates ?? 0) ? `, ${shown} listed` : ''}`],
        ['Excluded', excluded.length ? excluded.map(([k, v]) => `${k}: ${v}`).join(', ') : 'none'],
        ['Prompt kind', d.prompt_kind ?? '–'], ['Policy', d.policy ?? 'none'], ['Willingness to pay', d.willingness_to_pay === null ? 'not set (best quality)' : String(d.willingness_to_pay)],
        ['Input tokens', d.input_tokens === null ? '–' : `${compact(d.input_tokens)}${d.token_method ? ` (${d.token_method})` : ''}`],
        ['Expected output tokens', compact(d.expected_output_tokens)], ['Learned state', d.state_version === null ? '–' : `version ${d.state_version}`],
        ...(d.budget_dropped.length > 0 ? [['Left out by the key\'s budget', d.budget_dropped.join(', ')]] : []),
      ] as Array<[string, string]>).flatMap(([k, v]) => [h('dt', null, k), h('dd', null, v)])),
    d.explored ? badge('explored', 'warn') : null,
    h('h3', null, 'Plan (tried in order)'),
    table(['#', 'Model', 'Output cap'], d.plan.map((p, i) => [String(i + 1), p.model, p.max_output_tokens === null ? 'none' : compact(p.max_output_tokens)]), { numeric: [2], empty: 'No plan.' }),
    h('h3', null, 'Candidates'),
    table(['Model', 'Quality', 'Expected cost', 'Utility'], d.included.map((c) => [
      c.model === d.chosen ? h('strong', null, c.model) : c.model, n(c.quality), money(c.expected_cost_usd), n(c.utility)]), { numeric: [1, 2, 3], empty: shown === 0 && (d.candidates ?? 0) > 0 ? UNLISTED : 'None listed.' }),
    d.excluded.length ? [h('h3', null, 'Excluded'),
      table(['Model', 'Excluded by', 'Expected cost', 'Least possible cost'], d.excluded.map((c) => [c.model, c.constraint, money(c.expected_cost_usd), money(c.min_cost_usd)]), { numeric: [2, 3] })] : null,
    h('details', null, h('summary', null, o.rawLabel ?? 'As recorded (JSON)'), textBlock(JSON.stringify(d.raw), '')));
}
