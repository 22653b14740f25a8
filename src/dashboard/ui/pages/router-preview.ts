// The Router page's dry run ("Try the router"): a prompt and the router's request fields (willingness
// to pay, max_cost, max_cost_per_million_tokens, models), ranked as one of the caller's keys (or no key)
// would get it, through POST /router/preview: the choice and why, the plan, every candidate with its
// estimates and every exclusion with its constraint, shown as the request detail shows a recorded
// decision. No model is called and nothing is recorded.
import { api } from '../api.ts';
import { h, mount } from '../dom.ts';
import { errorBox, field, section, select } from '../widgets.ts';
import { previewBody } from '../preview-body.ts';
import { routerDecisionSection } from './router-decision.ts';

const PICKER_KEYS = 1000;

export function routerPreviewSection(): HTMLElement {
  const prompt = h('textarea', { name: 'prompt', rows: 4, required: true, placeholder: 'e.g. Write a SQL query that lists the ten largest orders of last month' });
  const wtp = h('input', { type: 'text', name: 'willingness_to_pay', inputmode: 'decimal', placeholder: 'best quality' });
  const maxCost = h('input', { type: 'text', name: 'max_cost', inputmode: 'decimal', placeholder: 'none' });
  const perMillion = h('input', { type: 'text', name: 'max_cost_per_million_tokens', inputmode: 'decimal', placeholder: 'none' });
  const models = h('input', { type: 'text', name: 'models', placeholder: 'every eligible model' });
  const key = select('key_id', [['', 'No key']], '');
  const run = h('button', { type: 'submit' }, 'Rank');
  const out = h('div', { 'aria-live': 'polite' });
  // The caller's keys (a member's own): a key's policy, defaults, allowed models and budget shape its ranking.
  // The newest PICKER_KEYS of them: a gateway with 10,000 keys would fetch 5 MB of keys and stats for this list.
  const keyHint = h('small', null);
  const keyField = field('As key', key);
  keyField.append(keyHint);
  api.keys({ limit: PICKER_KEYS }).then((r) => {
    for (const k of r.data) if (k.status === 'active') key.append(h('option', { value: k.id }, `${k.name} (${k.prefix}…)`));
    if (r.next_cursor !== null) keyHint.textContent = `the newest ${PICKER_KEYS} keys`;
  }, () => { /* no keys listed: ranking without a key still works */ });
  const submit = async (e: Event): Promise<void> => {
    e.preventDefault();
    if (prompt.value.trim() === '') { mount(out, errorBox(new Error('Write a prompt to rank.'))); return; }
    run.disabled = true;
    mount(out, h('p', { class: 'loading' }, 'Ranking…'));
    try {
      const r = await api.routerPreview(previewBody({ prompt: prompt.value, wtp: wtp.value, maxCost: maxCost.value, maxCostPerMillion: perMillion.value, models: models.value }), key.value || null);
      mount(out,
        r.defaults_applied ? h('p', { class: 'muted small' }, `The key's router defaults applied: ${r.defaults_applied}.`) : null,
        routerDecisionSection(r.decision, { title: 'What the router would do', rawLabel: 'As the request detail would record it (JSON)' }));
    } catch (err) {
      mount(out, errorBox(err));
    } finally {
      run.disabled = false;
    }
  };
  const wide = (el: HTMLElement): HTMLElement => { el.classList.add('wide'); return el; };
  return section('Try the router',
    h('p', { class: 'muted small' }, 'Ranks a prompt over the catalog as a request with "model": "router" would be ranked, without calling any model or recording anything: the model it would choose, the plan it would try, and why each other candidate lost or was excluded. Leave a field empty to leave it out of the request.'),
    h('form', { class: 'grid-form', 'aria-label': 'Try the router', onsubmit: (e: Event) => { void submit(e); } },
      wide(field('Prompt', prompt)),
      field('Willingness to pay (W)', wtp, 'USD a 10% quality gain is worth; empty: best quality'),
      field('Max cost (USD)', maxCost, 'for the whole request'),
      field('Max cost per million tokens (USD)', perMillion),
      wide(field('Models', models, 'provider/model ids or bare names, separated by commas')),
      keyField,
      h('div', { class: 'actions' }, run)),
    out);
}
