// The json-logic compiler gives the same answers as json-logic-js on random rules and data.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import jsonLogic from 'json-logic-js';
import { checkRule, compileRule } from '../src/mapping/logic.ts';

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => { s = (s * 1664525 + 1013904223) >>> 0; return s / 2 ** 32; };
}

const VARS = ['model', 'body.temperature', 'body.stream', 'body.tools', 'body.missing', 'body', 'body.n'];
const LEAVES: unknown[] = [0, 1, 1.5, -2, '', 'gpt', 'o3', 'gpt-4o', true, false, null, [], ['o3', 'gpt'], 'o3-mini'];
const OPS = ['==', '===', '!=', '!==', '!', '!!', 'or', 'and', 'if', '?:', '<', '<=', '>', '>=', 'in', 'starts_with', 'cat', 'var', 'min', 'max', '+'];

function gen(r: () => number, depth: number): unknown {
  if (depth <= 0 || r() < 0.3) return r() < 0.5 ? { var: VARS[Math.floor(r() * VARS.length)] } : LEAVES[Math.floor(r() * LEAVES.length)];
  const op = OPS[Math.floor(r() * OPS.length)]!;
  if (op === 'var') return r() < 0.5 ? { var: VARS[Math.floor(r() * VARS.length)] } : { var: [VARS[Math.floor(r() * VARS.length)], LEAVES[Math.floor(r() * LEAVES.length)]] };
  const n = op === '!' || op === '!!' ? 1 : ['or', 'and', 'if', 'cat', 'min', 'max', '+', '<', '<='].includes(op) ? 1 + Math.floor(r() * 4) : 2;
  return { [op]: Array.from({ length: n }, () => gen(r, depth - 1)) };
}

test('compiled rules agree with json-logic-js on 20,000 random rules', () => {
  const r = rng(42);
  const datas = [
    { model: 'o3-mini', body: { temperature: 0.7, stream: true, tools: [], n: 1 } },
    { model: 'gpt-4o', body: { temperature: 1.5, stream: false, tools: [{}], n: null } },
    { model: '', body: {} },
  ];
  for (let i = 0; i < 20_000; i++) {
    const rule = gen(r, 4);
    assert.deepEqual(checkRule(rule, ['model', 'body']), [], JSON.stringify(rule));
    const pred = compileRule(rule);
    for (const d of datas) {
      const expected = jsonLogic.truthy(jsonLogic.apply(rule as jsonLogic.RulesLogic, d));
      assert.equal(pred(d), expected, `${JSON.stringify(rule)} on ${JSON.stringify(d)}`);
    }
  }
});

test('the operations mapping rows use', () => {
  const data = { model: 'o3-mini', body: { temperature: 0.2 } };
  assert.equal(compileRule({ starts_with: [{ var: 'model' }, 'o3'] })(data), true);
  assert.equal(compileRule({ and: [{ '!=': [{ var: 'body.temperature' }, 1] }, { in: ['mini', { var: 'model' }] }] })(data), true);
  assert.equal(compileRule({ var: ['body.absent', false] })(data), false);
  assert.equal(compileRule(undefined)(data), true);
});

test('a value JSON made unconvertible ({"toString": 1}) fails every test instead of throwing mid-request', () => {
  const bad = JSON.parse('{"toString": 1, "valueOf": 2}') as unknown;
  const datas = [{ model: 'o3', body: { temperature: bad, tools: [bad], n: [[bad]] } }, { model: bad, body: bad }];
  const r = rng(7);
  for (let i = 0; i < 5_000; i++) {
    const rule = gen(r, 4);
    const pred = compileRule(rule);
    for (const d of datas) assert.equal(typeof pred(d), 'boolean', JSON.stringify(rule));
  }
  const d = datas[0]!;
  assert.equal(compileRule({ '==': [{ var: 'body.temperature' }, 'x'] })(d), false);
  assert.equal(compileRule({ '!=': [{ var: 'body.temperature' }, 'x'] })(d), true);
  assert.equal(compileRule({ '!': { '==': [{ var: 'body.temperature' }, 'x'] } })(d), true);
  assert.equal(compileRule({ '<': [{ var: 'body.temperature' }, 3] })(d), false);
  assert.equal(compileRule({ '>=': [{ var: 'body.tools' }, 3] })(d), false);
  assert.equal(compileRule({ in: [{ var: 'body.temperature' }, 'NaN and more'] })(d), true, 'converted as NaN: a string holding "NaN" contains it');
  assert.equal(compileRule({ in: [{ var: 'body.temperature' }, 'gpt'] })(d), false);
  assert.equal(compileRule({ in: ['o3', { var: 'body.tools' }] })(d), false);
  assert.equal(compileRule({ '==': [{ '+': [{ var: 'body.temperature' }, 1] }, 2] })(d), false);
  assert.equal(compileRule({ '==': [{ var: 'body.temperature' }, { var: 'body.temperature' }] })(d), true, 'two objects: identity, nothing converted');
});
