// The router's worker writes the stored decision and features texts straight from the encoded chunk
// (src/router/decision-text.ts): they must be, character for character, what the object path writes,
// JSON.stringify(roundRecorded(recordedDecision(...))) and JSON.stringify(features), over varied
// decisions (exploration, affinity, no route, excluded groups past the 10 kept, record_candidates all, 0 and 3,
// figures to round, unicode and escaped ids, constraint names JSON would reorder, attempts with errors);
// the rollup cells counted from the chunk equal those counted from the objects; and the chunk path
// stores the same rows and rollups as insertDecisions, a retried chunk and a repeated id counted once,
// on SQLite and PostgreSQL.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decide, type Decision, type DecideInput } from '../src/router/decide.ts';
import { compilePolicies } from '../src/router/policy.ts';
import { extractPromptFeatures, train, type Outcome } from '../src/router/quality/index.ts';
import { caps, decideInput, model, routerTestConfig } from './helpers/router-decide.ts';
import { warmTokenizers } from '../src/tokens/index.ts';
import { recordedDecision, roundRecorded } from '../src/router/explain.ts';
import { ALL, compileRouterSettings, RECORDED } from '../src/router/settings.ts';
import { RowEncoder, readChunk, type RowHead } from '../src/router/decision-row.ts';
import { round } from '../src/router/round.ts';
import { decisionFields, routerCells } from '../src/store/router-rollup.ts';
import { insertDecisions, storeDecisions, type DecisionRow } from '../src/router/store.ts';
import { openStore } from '../src/store/open.ts';
import { pgTestDb } from './helpers/pg.ts';
import type { AttemptRecord, Store } from '../src/store/types.ts';
import type { SqlRunner } from '../src/store/sql-runner.ts';

// pz: many models at odd prices (groups past the 10 recorded, figures to round), unicode names.
const many = Array.from({ length: 24 }, (_, i) => model(i % 5 === 0 ? `modèle-été-${i}-✓` : `m-${i}`, (0.0000001234567 * (i + 1) ** 1.7).toFixed(16), (0.00000098765 * (i + 2)).toFixed(14), caps({ tools: i % 3 === 0 })));
const cfg = routerTestConfig([['pz', many]]);

const input = (body: Record<string, unknown>, over: Partial<DecideInput> = {}): DecideInput => decideInput(cfg, body, over);

function learned() {
  const ids = ['pa/gpt-4o', 'pz/m-3', 'pz/modèle-été-5-✓'];
  const out: Outcome[] = [];
  for (let i = 0; i < 30; i++) {
    const f = extractPromptFeatures({ turns: [`Write a function that sorts ${i} numbers`] });
    out.push({ features: f, model: ids[i % 3]!, score: i % 4 === 0 ? 0 : 1, time: 1000 + i, costUsd: 0.001, outputTokens: 100 + i });
  }
  return train(out);
}

/** Ranked figures of every kind round() meets: tiny, huge, negative, zero, not finite. */
const ODD = [Number.NaN, 1e-30, 123456789.123, -0.5, -0, 0, Infinity, 0.000123456789, 9.99999951, 1 / 3, 2.5e-7];
function oddFigures(d: Decision, k: number): Decision {
  return { ...d, ranked: d.ranked.map((r, i) => (i % 2 ? r : { ...r, q: ODD[(i + k) % ODD.length]!, expectedCostUsd: ODD[(i + k + 3) % ODD.length]!, minCostUsd: ODD[(i + k + 5) % ODD.length]!, utility: ODD[(i + k + 7) % ODD.length]! })) };
}

/** Constraint names JSON.stringify writes before the others (array indexes), and names to escape. */
function oddNames(d: Decision): Decision {
  const rename = (c: string): string => (c === 'max_cost' ? '7' : `${c} "q" \u2028 \n`);
  const excludedBy: Record<string, number> = {};
  for (const [k, v] of Object.entries(d.excludedBy)) excludedBy[rename(k)] = v;
  return { ...d, excludedBy, ranked: d.ranked.map((r) => (r.excluded ? { ...r, excluded: { ...r.excluded, constraint: rename(r.excluded.constraint) } } : r)) };
}

/** Candidate ids needing escapes and outside the BMP, a lone surrogate included. */
function oddIds(d: Decision): Decision {
  const id = (s: string, i: number): string => (i % 3 === 0 ? `${s}/"quoted"\\back\ttab\u0001` : i % 3 === 1 ? `${s}/😀-\ud800-日本` : s);
  return { ...d, ranked: d.ranked.map((r, i) => ({ ...r, id: id(r.id, i) })) };
}

const ATTEMPTS: AttemptRecord[][] = [
  [],
  [{ provider: 'pa', model: 'pa/gpt-4o', status: 200, error: null, latencyMs: 120 }],
  [{ provider: 'pb', model: 'pb/gpt-4o', status: 503, error: 'upstream said "no"\nretry later ✗', latencyMs: 12.5 }, { provider: 'pa', model: 'pa/gpt-4o', status: null, error: 'timeout \ud83d', latencyMs: 30000 }],
];

/** router.record_candidates as the settings compile it: top (10), all, none, a number. */
const KEEPS = [RECORDED, ALL, 0, 3];

type Case = { head: RowHead; features: ReturnType<typeof extractPromptFeatures>; d: Decision; attempts: AttemptRecord[]; keep: number };

async function cases(): Promise<Case[]> {
  await warmTokenizers();
  const policy = compilePolicies({ p: [{ exclude: { '==': [{ var: 'candidate.provider' }, 'pc'] } }, { exclude: { '>': [{ var: 'candidate.quality' }, 0.99] } }] }).get('p')!;
  const state = learned();
  const tools = { tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }] };
  const bodies: Array<Record<string, unknown>> = [
    {}, { willingness_to_pay: 0.01 }, { max_cost: 0.00001 }, { max_cost: 1e-12 }, tools, { ...tools, max_cost: 0.0001 },
    { models: ['gpt-4o', 'claude-sonnet-4-5'] }, { messages: [{ role: 'user', content: 'def f(x): return x + 1  # fix the bug, ünïcödé 😀' }] },
  ];
  const overs: Array<Partial<DecideInput>> = [
    {}, { policy }, { quality: state }, { fullRanking: true },
    { settings: { ...cfg.router, explorationShare: 1, explorationEvidence: 1e9, learnsFrom: { all: true, keys: [] } } },
    { affinity: { id: 'pz/m-4', cachedTokens: 500 } }, { affinity: { id: 'pa/gpt-4o-mini', cachedTokens: 5 }, policy },
  ];
  const out: Case[] = [];
  let k = 0;
  for (const body of bodies) {
    for (const over of overs) {
      const inp = input(body, over);
      const base = decide(inp);
      for (const d of [base, oddFigures(base, k), oddNames(base), oddIds(base)]) {
        k++;
        out.push({
          head: {
            inferenceId: `id-${k % 97 === 0 ? k - 1 : k}`, // now and then an id twice in a chunk
            createdAt: new Date(Date.UTC(2026, 0, 1 + (k % 3), 23, 50) + k * 61_000).toISOString(), keyId: k % 4 ? `key-${k % 3}` : null,
            servedModel: d.chosen?.id ?? null, canonical: d.chosen?.canonical ?? null, kind: inp.view.features.kind,
            status: k % 5 ? 200 : 502, costUsd: k % 6 ? `0.${String(k).padStart(4, '0')}00000000000000001` : '0',
            // Now and then targets the key's budget left out (recorded as budget_dropped).
            ...(k % 7 === 0 ? { budgetDropped: ['pa/gpt-4o', `pz/modèle-été-${k}-✓`] } : {}),
          },
          features: inp.view.features, d, attempts: ATTEMPTS[k % ATTEMPTS.length]!, keep: KEEPS[k % KEEPS.length]!,
        });
      }
    }
  }
  return out;
}

const all = await cases();
/** What the object path stores for a case (DecisionRow, as before the chunk path). */
const rowOf = (c: Case): DecisionRow => ({ ...c.head, features: c.features, decision: roundRecorded(recordedDecision(c.d, c.attempts, c.keep, c.head.budgetDropped)) });

function encode(list: readonly Case[]) {
  const enc = new RowEncoder();
  for (const c of list) enc.add(c.head, c.features, c.d, c.attempts, c.keep);
  return structuredClone(enc.seal());
}

test('round: the figures roundRecorded stores', () => {
  // roundRecorded (explain.ts) and the worker's decision text (decision-text.ts) round each figure to the same digits (q 3, chosen 4, costs 3, chosen cost 6).
  for (let i = 0; i < 200_000; i++) {
    const x = (Math.random() - 0.3) * 10 ** (Math.floor(Math.random() * 50) - 35);
    const r = roundRecorded({ chosen_quality: x, chosen_cost_usd: x, included: [['a', x, x, x]], excluded: { c: [['b', x, x]] } } as never);
    assert.deepEqual([r.chosen_quality, r.chosen_cost_usd, ...r.included[0]!.slice(1), ...r.excluded.c![0]!.slice(1)], [round(x, 4), round(x), round(x, 3), round(x, 3), round(x, 4), round(x, 3), round(x, 3)], String(x));
  }
});

test('the chunk path writes the texts the object path writes, character for character', () => {
  assert.ok(all.length > 200, `${all.length} decisions`);
  assert.ok(all.some((c) => c.d.explored) && all.some((c) => c.d.chosen === null) && all.some((c) => c.d.affinity !== null), 'exploration, no route and affinity are covered');
  assert.ok(all.some((c) => c.d.ranked.filter((r) => r.excluded?.constraint === c.d.ranked.find((x) => x.excluded)?.excluded?.constraint).length > 10), 'a group past the 10 recorded');
  // Chunks of a few sizes (the strings table is per chunk).
  for (const size of [1, 7, all.length]) {
    for (let i = 0; i < all.length; i += size) {
      const part = all.slice(i, i + size);
      const rows = readChunk(encode(part));
      assert.equal(rows.length, part.length);
      rows.forEach((r, j) => {
        const want = rowOf(part[j]!);
        const label = `case ${i + j}`;
        assert.equal(r.decision, JSON.stringify(want.decision), label);
        assert.equal(r.features, JSON.stringify(want.features), label);
        assert.deepEqual([r.inferenceId, r.createdAt, r.keyId, r.servedModel, r.canonical, r.kind, r.status, r.costUsd],
          [want.inferenceId, want.createdAt, want.keyId, want.servedModel, want.canonical, want.kind, want.status, want.costUsd], label);
        // What the rollups count, as read from the stored decision object.
        const { chosen, quality, predicted, explored, affinity, attempts, version, excludedBy } = r;
        assert.deepEqual({ chosen, quality, predicted, explored, affinity, attempts, version, excludedBy }, decisionFields(want.decision), label);
      });
    }
  }
});

/** Cells as the rollups were counted before the chunk path: per row and cell, from the decision objects (commit 1ee0888's routerCells). */
function referenceCells(rows: readonly DecisionRow[]) {
  const hour = (iso: string) => `${iso.slice(0, 13)}:00:00.000Z`;
  const day = (iso: string) => `${iso.slice(0, 10)}T00:00:00.000Z`;
  const sum = (a: string, b: string) => { // exact decimal addition, plainly
    const scale = Math.max(a.split('.')[1]?.length ?? 0, b.split('.')[1]?.length ?? 0);
    const big = (s: string) => BigInt(s.replace('.', '') + '0'.repeat(scale - (s.split('.')[1]?.length ?? 0)));
    const t = (big(a) + big(b)).toString().padStart(scale + 1, '0');
    const out = scale ? `${t.slice(0, -scale)}.${t.slice(-scale)}`.replace(/\.?0+$/, '') : t;
    return out;
  };
  const models = new Map<string, Record<string, unknown>>(); const kinds = new Map<string, Record<string, unknown>>();
  const versions = new Map<string, Record<string, unknown>>(); const excl = new Map<string, Record<string, unknown>>();
  for (const r of rows) {
    const d = r.decision as ReturnType<typeof roundRecorded>;
    const t = hour(r.createdAt); const key = r.keyId ?? ''; const chosen = d.chosen ?? '';
    const m = (models.get(`${t}|${key}|${chosen}`) ?? models.set(`${t}|${key}|${chosen}`, { t, keyId: key, chosen, n: 0, errors: 0, cost: '0', predictedSum: 0, predictedN: 0, qualitySum: 0, qualityN: 0, fallbacks: 0, explored: 0, affinityKnown: 0, affinityChosen: 0 }).get(`${t}|${key}|${chosen}`))! as Record<string, number | string>;
    (m.n as number)++; if (r.status >= 400) (m.errors as number)++; m.cost = sum(m.cost as string, r.costUsd);
    if (d.chosen_cost_usd !== null) { (m.predictedSum as number) += d.chosen_cost_usd; (m.predictedN as number)++; }
    if (d.chosen_quality !== null) { (m.qualitySum as number) += d.chosen_quality; (m.qualityN as number)++; }
    if (d.attempts.length > 1) (m.fallbacks as number)++;
    if (d.explored) (m.explored as number)++;
    if (d.affinity !== null) { (m.affinityKnown as number)++; if (d.affinity === d.chosen) (m.affinityChosen as number)++; }
    for (const [grain, span, at, k] of [['key', 'h', t, key], ['key', 'd', day(t), key], ['total', 'h', t, ''], ['total', 'd', day(t), '']] as const) {
      const id = `${grain}|${span}|${at}|${k}|${r.kind}|${chosen}`;
      const c = (kinds.get(id) ?? kinds.set(id, { grain, span, t: at, keyId: k, kind: r.kind, chosen, n: 0, errors: 0, cost: '0' }).get(id))! as Record<string, number | string>;
      (c.n as number)++; if (r.status >= 400) (c.errors as number)++; c.cost = sum(c.cost as string, r.costUsd);
    }
    const vid = `${t}|${key}|${d.state_version}`;
    const v = versions.get(vid) as { n: number; firstAt: string; lastAt: string } | undefined;
    if (!v) versions.set(vid, { t, keyId: key, version: d.state_version, n: 1, firstAt: r.createdAt, lastAt: r.createdAt });
    else { v.n++; if (r.createdAt < v.firstAt) v.firstAt = r.createdAt; if (r.createdAt > v.lastAt) v.lastAt = r.createdAt; }
    for (const [constraint, k] of Object.entries(d.excluded_by)) {
      if (!(k > 0)) continue;
      const e = excl.get(`${t}|${key}|${constraint}`) as { decisions: number; candidates: number } | undefined;
      if (!e) excl.set(`${t}|${key}|${constraint}`, { t, keyId: key, constraint, decisions: 1, candidates: k }); else { e.decisions++; e.candidates += k; }
    }
  }
  const sorted = (m: Map<string, Record<string, unknown>>) => [...m.values()].sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
  return { models: sorted(models), versions: sorted(versions), excl: sorted(excl), kinds: sorted(kinds) };
}

test('a sealed chunk is posted to the router\'s worker without a copy: its buffers are shared memory, and what the worker reads is the chunk as sealed', async () => {
  const { MessageChannel, receiveMessageOnPort } = await import('node:worker_threads');
  const enc = new RowEncoder();
  for (const c of all.slice(0, 40)) enc.add(c.head, c.features, c.d, c.attempts, c.keep);
  const chunk = enc.seal();
  assert.ok(chunk.json.buffer instanceof SharedArrayBuffer, 'the text is in shared memory');
  assert.ok(chunk.nums.buffer instanceof SharedArrayBuffer, 'the numbers are in shared memory');
  const { port1, port2 } = new MessageChannel();
  port1.postMessage({ op: 'decisions', chunk });
  const got = (receiveMessageOnPort(port2)!.message as { chunk: typeof chunk }).chunk;
  port1.close();
  // The same memory on both sides (a clone would hold a copy), and the rows read from it are the sealed ones.
  const before = chunk.nums[0]!;
  chunk.nums[0] = before + 1;
  assert.equal(got.nums[0], before + 1, 'the receiver sees the sender\'s memory');
  chunk.nums[0] = before;
  assert.deepEqual(readChunk(got), readChunk(chunk));
  assert.equal(readChunk(got).length, 40);
});

test('record_candidates: each group lists that many candidates (none with 0), the counts, the chosen figures and the plan stay whole', () => {
  assert.deepEqual(['top', 'all', 0, 3, undefined].map((v) => compileRouterSettings({ record_candidates: v }).recordCandidates), [10, ALL, 0, 3, 10]);
  const seen = new Set<number>();
  for (const c of all) {
    const d = JSON.parse(readChunk(encode([c]))[0]!.decision) as ReturnType<typeof roundRecorded>;
    const included = c.d.ranked.filter((r) => !r.excluded);
    assert.equal(d.included.length, Math.min(c.keep, included.length));
    assert.deepEqual(d.included.map((x) => x[0]), included.slice(0, d.included.length).map((r) => r.id));
    for (const [name, n] of Object.entries(c.d.excludedBy)) {
      if (c.keep === 0) { assert.equal(d.excluded[name], undefined); continue; }
      const members = c.d.ranked.filter((r) => r.excluded?.constraint === name);
      // A decision not ranked in full holds only the first few of a group (its count is whole).
      assert.equal(d.excluded[name]?.length ?? 0, Math.min(c.keep, members.length), name);
      assert.ok(n >= members.length);
    }
    assert.deepEqual(d.excluded_by, c.d.excludedBy);
    assert.equal(d.chosen, c.d.chosen?.id ?? null);
    assert.deepEqual(d.plan.map((p) => p[0]), c.d.plan.map((t) => t.candidate.id));
    if (c.d.ranked.some((r) => r.excluded) || included.length > 0) seen.add(c.keep);
  }
  assert.deepEqual([...seen].sort(), [...KEEPS].sort(), 'every setting covered');
  // Listing none makes the stored decision smaller (about half on these 30-candidate decisions; a catalog-wide one: docs/router.md).
  const size = (keep: number) => all.reduce((t, c) => t + readChunk(encode([{ ...c, keep }]))[0]!.decision.length, 0);
  assert.ok(size(0) < size(RECORDED) * 0.6, `${size(0)} vs ${size(RECORDED)}`);
});

test('rollup cells from the chunk equal the cells counted row by row from the decision objects', () => {
  const unique = all.filter((c, i) => all.findIndex((x) => x.head.inferenceId === c.head.inferenceId) === i);
  const got = routerCells(readChunk(encode(unique)));
  const sorted = <T>(l: T[]) => [...l].sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
  const want = referenceCells(unique.map(rowOf));
  assert.deepEqual({ models: sorted(got.models), versions: sorted(got.versions), excl: sorted(got.excl), kinds: sorted(got.kinds) }, want);
  assert.ok(got.kinds.length > 8 && got.excl.length > 4 && got.versions.length > 2, 'several cells of each table');
});

const pgDb = await pgTestDb('gw_record');

const dump = async (sql: SqlRunner) => ({
  decisions: (await sql.all('SELECT inference_id, created_at, key_id, served_model, canonical, kind, features, decision FROM router_decisions ORDER BY inference_id'))
    .map((r): Record<string, unknown> => ({ ...r, created_at: r.created_at instanceof Date ? r.created_at.toISOString() : r.created_at })),
  rollup: await sql.all('SELECT * FROM router_rollup ORDER BY t, key_id, chosen'),
  version: await sql.all('SELECT * FROM router_rollup_version ORDER BY t, key_id, state_version'),
  excl: await sql.all('SELECT * FROM router_rollup_excl ORDER BY t, key_id, constraint_name'),
  kind: await sql.all('SELECT * FROM router_rollup_kind ORDER BY grain, span, t, key_id, kind, chosen'),
});

for (const dialect of ['sqlite', 'postgres'] as const) {
  test(`${dialect}: the chunk path stores what insertDecisions stores; a retried chunk and a repeated id count once`, async (t) => {
    if (dialect === 'postgres' && !pgDb) { t.skip('PostgreSQL unreachable'); return; }
    const dir = mkdtempSync(join(tmpdir(), 'gw-record-db-'));
    const open = (name: string): Promise<Store> => openStore(dialect === 'postgres' ? pgDb!.storeOptions(pgDb!.another()) : { sqlitePath: join(dir, `${name}.db`) });
    const [a, b] = [await open('a'), await open('b')];
    try {
      const part1 = all.slice(0, 120); const part2 = all.slice(100); // rows 100..119 in both: a retry that partly landed
      for (const part of [part1, part2, part1]) await storeDecisions(a.sql, readChunk(encode(part)));
      for (const part of [part1, part2, part1]) await insertDecisions(b.sql, part.map(rowOf));
      const [x, y] = [await dump(a.sql), await dump(b.sql)];
      assert.equal(x.decisions.length, new Set(all.map((c) => c.head.inferenceId)).size);
      assert.deepEqual(x, y);
      // The stored texts are the object path's (the first copy of a repeated id).
      const first = new Map<string, Case>();
      for (const c of all) if (!first.has(c.head.inferenceId)) first.set(c.head.inferenceId, c);
      for (const r of x.decisions) {
        const c = first.get(String(r.inference_id))!;
        if (dialect === 'sqlite') assert.equal(r.decision, JSON.stringify(rowOf(c).decision));
        else assert.deepEqual(JSON.parse(String(r.decision)), JSON.parse(JSON.stringify(rowOf(c).decision)));
      }
      const routed = await a.sql.all('SELECT SUM(n) AS n FROM router_rollup');
      assert.equal(Number(routed[0]!.n), x.decisions.length, 'each stored decision counted once');
    } finally {
      await a.close();
      await b.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
