// Pure parts of the dashboard: chart geometry (SVG built as data), histogram percentiles, confidence
// intervals, time-zone buckets across DST, UUIDv7 time bounds and CSV cells.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { barChart, barLabel, lineChart, niceTicks } from '../src/dashboard/ui/charts.ts';
import type { VNode } from '../src/dashboard/ui/vnode.ts';
import { bucketIndex, bucketStarts, confidence, quantile } from '../src/dashboard/rollup-math.ts';
import { idAt, timeOfId } from '../src/dashboard/history.ts';
import { csvCell } from '../src/http/admin-api/export.ts';
import { uuidv7 } from '../src/util/uuid.ts';
import { changedFields, keyInput } from '../src/dashboard/ui/key-input.ts';
import { feedbackText, kindModelsText, requestsLink } from '../src/dashboard/ui/router-text.ts';
import { previewBody } from '../src/dashboard/ui/preview-body.ts';
import { wordPieces } from '../src/dashboard/ui/word-pieces.ts';

const all = (n: VNode, tag: string): VNode[] => [...(n.tag === tag ? [n] : []), ...n.children.flatMap((c) => (typeof c === 'string' ? [] : all(c, tag)))];

test('niceTicks covers the range with round steps', () => {
  assert.deepEqual(niceTicks(0, 10, 5), [0, 2, 4, 6, 8, 10]);
  assert.deepEqual(niceTicks(0, 0.00042, 4), [0, 0.0002, 0.0004, 0.0006]);
  assert.deepEqual(niceTicks(0, 0), [0, 0.2, 0.4, 0.6, 0.8, 1]);
});

test('lineChart: one point per value, null breaks a line, titles for screen readers', () => {
  const c = lineChart({ title: 'Requests', labels: ['a', 'b', 'c', 'd'], series: [{ name: 's', values: [1, null, 3, 4] }] });
  assert.equal(c.attrs.role, 'img');
  assert.equal(c.attrs['aria-label'], 'Requests');
  assert.equal(all(c, 'circle').length, 3);
  assert.equal(all(c, 'polyline').length, 1, 'the lone first point makes no segment; c-d does');
  const stacked = lineChart({ title: 'x', labels: ['a', 'b'], stacked: true, series: [{ name: 'a', values: [1, 1] }, { name: 'b', values: [2, 2] }] });
  assert.equal(all(stacked, 'polygon').length, 2);
  // An x label that would run past the right edge centred ends at its point, or is left out when it would
  // then run into the one before it; the others are centred.
  const xlabels = (ch: ReturnType<typeof lineChart>): Array<[unknown, unknown]> => all(ch, 'text').filter((t) => t.attrs.class === 'xlabel').map((t) => [t.children[0], t.attrs['text-anchor']]);
  const day = (n: number): string[] => Array.from({ length: n }, (_, i) => `28 Nov, ${String(i).padStart(2, '0')}:00`);
  assert.deepEqual(xlabels(lineChart({ title: 't', labels: day(4), series: [] })), [['28 Nov, 00:00', 'middle'], ['28 Nov, 01:00', 'middle'], ['28 Nov, 02:00', 'middle'], ['28 Nov, 03:00', 'end']]);
  assert.deepEqual(xlabels(lineChart({ title: 't', labels: day(25), series: [] })).map(([l]) => l), ['28 Nov, 00:00', '28 Nov, 04:00', '28 Nov, 08:00', '28 Nov, 12:00', '28 Nov, 16:00', '28 Nov, 20:00'],
    'the label at 24:00 would run into 20:00');
});

test('barChart scales bars to the largest and keeps label text as text', () => {
  const b = barChart({ title: 't', bars: [{ label: '<b>x</b>', value: 2 }, { label: 'y', value: 1 }] });
  const rects = all(b, 'rect');
  assert.ok(Number(rects[0]!.attrs.width) > Number(rects[1]!.attrs.width) * 1.9);
  assert.ok(all(b, 'text').some((t) => t.children[0] === '<b>x</b>'));
});

test('a long bar label keeps its end (a provider/model id keeps the model name)', () => {
  assert.equal(barLabel('openai/gpt-5.6-sol'), 'openai/gpt-5.6-sol');
  const long = barLabel('fireworks/accounts/fireworks/models/deepseek-v4-pro');
  assert.ok(long.startsWith('…') && long.endsWith('/models/deepseek-v4-pro') && long.length === 26, long);
  assert.equal(barLabel('x'.repeat(40)).length, 26);
});

test('quantile interpolates within the histogram bucket', () => {
  const h = new Array(20).fill(0);
  h[2] = 10; // 50-100 ms
  assert.equal(quantile(h, 0.5), 75);
  assert.equal(quantile(new Array(20).fill(0), 0.5), null);
  h[19] = 10; // open last bucket: its lower bound
  assert.equal(quantile(h, 0.99), 120000);
});

test('confidence: Wilson for rates, normal for means', () => {
  const r = confidence('boolean', 100, 80, 80);
  assert.equal(r.mean, 0.8);
  assert.ok(r.lo! > 0.7 && r.lo! < 0.8 && r.hi! > 0.8 && r.hi! < 0.88);
  const f = confidence('float', 4, 10, 30);
  assert.equal(f.mean, 2.5);
  assert.ok(f.lo! < 2.5 && f.hi! > 2.5);
  assert.deepEqual(confidence('comment', 3, 0, 0), { mean: null, lo: null, hi: null });
});

test('day buckets follow the zone across a DST change (Europe/Berlin, 2026-03-29)', () => {
  const from = Date.parse('2026-03-28T12:00:00Z'), to = Date.parse('2026-03-31T00:00:00Z');
  const starts = bucketStarts('day', 'Europe/Berlin', from, to)!.map((t) => new Date(t).toISOString());
  assert.deepEqual(starts, ['2026-03-27T23:00:00.000Z', '2026-03-28T23:00:00.000Z', '2026-03-29T22:00:00.000Z', '2026-03-30T22:00:00.000Z']);
  const weeks = bucketStarts('week', 'UTC', Date.parse('2026-11-18T00:00:00Z'), Date.parse('2026-11-24T00:00:00Z'))!;
  assert.deepEqual(weeks.map((t) => new Date(t).toISOString()), ['2026-11-16T00:00:00.000Z', '2026-11-23T00:00:00.000Z']);
  assert.equal(bucketIndex(weeks, Date.parse('2026-11-20T00:00:00Z')), 0);
  assert.equal(bucketStarts('hour', 'UTC', 0, 3_600_000 * 3000), null, 'too many buckets');
});

test('a time window is an id range: idAt bounds UUIDv7 ids by their time', () => {
  const t = Date.parse('2026-11-23T10:00:00Z');
  const before = uuidv7(t - 1), at = uuidv7(t), after = uuidv7(t + 1);
  assert.ok(before < idAt(t) && at >= idAt(t) && after >= idAt(t));
  assert.equal(timeOfId(at), t);
});

test('CSV cells: quoted when needed, formulas neutralised', () => {
  assert.equal(csvCell('a,b'), '"a,b"');
  assert.equal(csvCell('say "hi"'), '"say ""hi"""');
  assert.equal(csvCell('=HYPERLINK("x")'), '"\'=HYPERLINK(""x"")"');
  assert.equal(csvCell(null), '');
  assert.equal(csvCell(-3), '-3');
});

test('key form values: empty fields clear limits on edit and are left out on create; members send name and expiry only', () => {
  assert.deepEqual(keyInput({ name: ' k ', budget_usd: '', rpm_limit: '' }, false, true), { name: 'k', allowed_models: [] });
  assert.deepEqual(keyInput({ name: 'k', budget_usd: '', rpm_limit: '', tpm_limit: '', expires_at: '', owner_id: '' }, true, true),
    { name: 'k', expires_at: null, allowed_models: [], budget_usd: null, budget_period: null, rpm_limit: null, tpm_limit: null, owner_id: null });
  assert.deepEqual(keyInput({ name: 'k', budget_usd: '5', budget_period: 'week' }, false, true), { name: 'k', allowed_models: [], budget_usd: '5', budget_period: 'week' });
  assert.deepEqual(keyInput({ name: 'k', budget_usd: '5' }, false, false), { name: 'k' });
  // An edit sends what the form changed only: fields another admin set since the form opened stand.
  const opened = keyInput({ name: 'k', budget_usd: '5', budget_period: 'week', allowed_models: 'a/*, b/*', rpm_limit: '60' }, true, true);
  assert.deepEqual(changedFields(opened, keyInput({ name: 'k2', budget_usd: '5', budget_period: 'week', allowed_models: 'a/*,b/*', rpm_limit: '' }, true, true)), { name: 'k2', rpm_limit: null });
  assert.deepEqual(changedFields(opened, opened), {});
});

test('router page: feedback lines, links to the routed requests', () => {
  assert.equal(feedbackText({ metric: 'good', type: 'boolean', count: 8, mean: 0.625, rate: 0.625 }), 'good: 62.5% (n=8)');
  assert.equal(feedbackText({ metric: 'score', type: 'float', count: 5, mean: 3.2, rate: null }), 'score: 3.20 (n=5)');
  assert.equal(feedbackText({ metric: 'note', type: 'comment', count: 2, mean: null, rate: null }), 'note: 2 comments');
  assert.equal(requestsLink('p/m a', { range: '24h' }), '/dashboard/requests?range=24h&routed=true&served=p%2Fm+a');
  assert.equal(requestsLink('p/m', {}), '/dashboard/requests?range=7d&routed=true&served=p%2Fm');
  assert.equal(kindModelsText({ models: [{ model: 'p/a', requests: 3, share: 0.5 }, { model: 'p/b', requests: 1, share: 1 / 6 }], other: { models: 2, requests: 2, share: 1 / 3 } }),
    'p/a 50.0% · p/b 16.7% · 2 more 33.3%');
  assert.equal(kindModelsText({ models: [], other: null }), '–');
});

test('previewBody: empty fields are left out, numbers parsed, anything else sent as written (the gateway names the field), models split', () => {
  const blank = { prompt: 'hi', wtp: '', maxCost: ' ', maxCostPerMillion: '', models: '' };
  assert.deepEqual(previewBody(blank), { model: 'router', messages: [{ role: 'user', content: 'hi' }] });
  assert.deepEqual(previewBody({ ...blank, wtp: '0.001', maxCost: '1e-3', maxCostPerMillion: 'cheap', models: ' openai/gpt-5.4, claude-sonnet-5\nx ' }), {
    model: 'router', messages: [{ role: 'user', content: 'hi' }], willingness_to_pay: 0.001, max_cost: 0.001, max_cost_per_million_tokens: 'cheap',
    models: ['openai/gpt-5.4', 'claude-sonnet-5', 'x'],
  });
});

test('wordPieces: only words over 24 characters get break opportunities, every 12 whole graphemes', () => {
  assert.deepEqual(wordPieces('member /v1/chat/completions otherai/model-16'), ['member /v1/chat/completions otherai/model-16']);
  const long = `${'x'.repeat(30)} ok`;
  assert.deepEqual(wordPieces(long), ['x'.repeat(12), 'x'.repeat(12), 'xxxxxx ok']);
  const emoji = '😀'.repeat(30);
  const pieces = wordPieces(emoji);
  assert.equal(pieces.join(''), emoji, 'nothing is added or lost');
  assert.deepEqual(pieces.map((p) => [...p].length), [12, 12, 6], 'an emoji (two UTF-16 units) is never cut in half');
});
