// Rules of one feedback event: value types, {score, reason}, nesting, keys, tags, optimize, limits.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { flattenEvent, type FlatEvent } from '../src/feedback/flatten.ts';
import { resolveLimits, DEFAULT_FEEDBACK_LIMITS } from '../src/feedback/limits.ts';

const ID = '0192f5e3-7c1a-7b2e-9c4d-1a2b3c4d5e6f';
const limits = resolveLimits();
const flat = (feedback: unknown, extra: Record<string, unknown> = {}, l = limits): FlatEvent =>
  flattenEvent({ id: ID, feedback, ...extra }, l);
const entries = (feedback: unknown) => {
  const r = flat(feedback);
  assert.ok(r.ok, r.ok ? '' : r.message);
  return r.entries;
};
const error = (ev: unknown, l = limits): string => {
  const r = flattenEvent(ev, l);
  assert.equal(r.ok, false, 'expected the event to fail');
  return r.ok ? '' : r.message;
};

test('booleans, numbers (ints become floats) and strings', () => {
  assert.deepEqual(entries({ ok: true, bad: false, n: 3, x: 0.25, neg: -1e-3, c: 'nice' }), [
    { metric: 'ok', type: 'boolean', value: 'true', reason: null },
    { metric: 'bad', type: 'boolean', value: 'false', reason: null },
    { metric: 'n', type: 'float', value: '3', reason: null },
    { metric: 'x', type: 'float', value: '0.25', reason: null },
    { metric: 'neg', type: 'float', value: '-0.001', reason: null },
    { metric: 'c', type: 'comment', value: 'nice', reason: null },
  ]);
});

test('{score, reason?}: the score fixes the type, the reason is kept', () => {
  assert.deepEqual(entries({
    a: { score: true, reason: 'correct' }, b: { score: 4 }, c: { score: 0.5, reason: '' }, d: { score: 'meh', reason: 'why' },
  }), [
    { metric: 'a', type: 'boolean', value: 'true', reason: 'correct' },
    { metric: 'b', type: 'float', value: '4', reason: null },
    { metric: 'c', type: 'float', value: '0.5', reason: '' },
    { metric: 'd', type: 'comment', value: 'meh', reason: 'why' },
  ]);
});

test('nested objects flatten with dots at any depth; other objects with score are groups', () => {
  assert.deepEqual(entries({ q: { acc: { top1: 0.9, deep: { deeper: { ok: true } } }, tone: 'dry' }, g: { score: 1, extra: 2 } }), [
    { metric: 'q.acc.top1', type: 'float', value: '0.9', reason: null },
    { metric: 'q.acc.deep.deeper.ok', type: 'boolean', value: 'true', reason: null },
    { metric: 'q.tone', type: 'comment', value: 'dry', reason: null },
    { metric: 'g.score', type: 'float', value: '1', reason: null },
    { metric: 'g.extra', type: 'float', value: '2', reason: null },
  ]);
  // Keys that name Object.prototype members are ordinary metric names.
  assert.deepEqual(entries(JSON.parse('{"__proto__": {"x": 1}, "constructor": true}')).map((e) => e.metric), ['__proto__.x', 'constructor']);
  assert.deepEqual(entries({ q: { s: { score: false, reason: 'r' } } }), [
    { metric: 'q.s', type: 'boolean', value: 'false', reason: 'r' },
  ]);
});

test('empty feedback is valid; defaults are tags {} and optimize not given (null); the id is lower-cased', () => {
  const r = flattenEvent({ id: ID.toUpperCase(), feedback: {} }, limits);
  assert.deepEqual(r, { ok: true, id: ID, entries: [], tags: {}, optimize: null });
});

test('unsupported values fail with the flattened key named', () => {
  assert.equal(error({ id: ID, feedback: { a: { b: [1] } } }), 'feedback.a.b: array is not a supported feedback value (use a boolean, number, string, {score, reason} or an object)');
  assert.match(error({ id: ID, feedback: { n: null } }), /^feedback\.n: null is not a supported feedback value/);
  assert.equal(error({ id: ID, feedback: { s: { score: null } } }), 'feedback.s.score must be a boolean, number or string; got null');
  assert.equal(error({ id: ID, feedback: { s: { score: [1], reason: 'x' } } }), 'feedback.s.score must be a boolean, number or string; got array');
  assert.equal(error({ id: ID, feedback: { s: { score: { v: 1 } } } }), 'feedback.s.score must be a boolean, number or string; got object');
  assert.equal(error({ id: ID, feedback: { s: { score: 1, reason: 5 } } }), 'feedback.s.reason must be a string; got number');
  assert.equal(error({ id: ID, feedback: { s: { score: 1, reason: null } } }), 'feedback.s.reason must be a string; got null');
  assert.equal(error({ id: ID, feedback: { x: Number.POSITIVE_INFINITY } }), 'feedback.x: numbers must be finite');
  assert.equal(error({ id: ID, feedback: { x: Number.NaN } }), 'feedback.x: numbers must be finite');
});

test('id and feedback are required and checked; unknown fields are refused', () => {
  assert.equal(error({ feedback: {} }), 'id is required (the inference id, a UUID string)');
  assert.equal(error({ id: 42, feedback: {} }), 'id must be a UUID string; got number');
  assert.equal(error({ id: 'not-a-uuid', feedback: {} }), 'id must be a UUID string; got "not-a-uuid"');
  assert.equal(error({ id: ID }), 'feedback is required (an object of feedback values)');
  assert.equal(error({ id: ID, feedback: [] }), 'feedback must be an object; got array');
  assert.equal(error({ id: ID, feedback: 'good' }), 'feedback must be an object; got string');
  assert.equal(error(null), 'each feedback event must be an object; got null');
  assert.equal(error([ID]), 'each feedback event must be an object; got array');
  assert.equal(error({ id: ID, feedback: {}, tag: {} }), 'unknown field "tag"; an event has id, feedback, tags and optimize');
});

test('keys: no dots, not empty, no control characters, bounded length', () => {
  assert.equal(error({ id: ID, feedback: { 'a.b': 1 } }), 'feedback: key "a.b" contains a dot; dots join nested keys, so nest an object instead');
  assert.equal(error({ id: ID, feedback: { q: { 'x.y': 1 } } }), 'feedback.q: key "x.y" contains a dot; dots join nested keys, so nest an object instead');
  assert.equal(error({ id: ID, feedback: { q: { '': 1 } } }), 'feedback.q: keys must not be empty');
  assert.equal(error({ id: ID, feedback: { 'a\nb': 1 } }), 'feedback: key "a\\nb" contains control characters');
  const l = resolveLimits({ maxKeyLength: 8 });
  assert.ok(flat({ abcd: { efg: 1 } }, {}, l).ok);
  assert.equal(error({ id: ID, feedback: { abcd: { efgh: 1 } } }, l), 'feedback.abcd: key "abcd.efgh" is longer than 8 characters once flattened');
});

test('keys: a lone surrogate is refused (stored as U+FFFD, two such names would be one metric of two types)', () => {
  assert.equal(error({ id: ID, feedback: { '\ud800': 1 } }), 'feedback: key "\\ud800" is not valid Unicode (a lone surrogate)');
  assert.equal(error({ id: ID, feedback: { q: { 'x\udc00': 'a' } } }), 'feedback.q: key "x\\udc00" is not valid Unicode (a lone surrogate)');
  assert.ok(flat({ '\u{1f389}': true }).ok, 'a surrogate pair is a character like any other');
});

test('depth, entries and comment limits', () => {
  const l = resolveLimits({ maxDepth: 3, maxEntriesPerEvent: 2, maxCommentLength: 5, maxReasonLength: 3 });
  assert.ok(flat({ a: { b: { c: 1 } } }, {}, l).ok);
  assert.equal(error({ id: ID, feedback: { a: { b: { c: { d: 1 } } } } }, l), 'feedback.a.b.c: nested deeper than 3 levels');
  assert.equal(error({ id: ID, feedback: { a: 1, b: 2, c: 3 } }, l), 'feedback: more than 2 values in one event');
  assert.ok(flat({ c: '12345' }, {}, l).ok);
  assert.equal(error({ id: ID, feedback: { c: '123456' } }, l), 'feedback.c: comment is longer than 5 characters');
  assert.equal(error({ id: ID, feedback: { c: { score: '123456' } } }, l), 'feedback.c.score: comment is longer than 5 characters');
  assert.equal(error({ id: ID, feedback: { c: { score: 1, reason: 'abcd' } } }, l), 'feedback.c.reason is longer than 3 characters');
  // The default depth limit is reachable: exactly maxDepth levels pass.
  let deep: unknown = true;
  for (let i = 0; i < DEFAULT_FEEDBACK_LIMITS.maxDepth; i++) deep = { k: deep };
  assert.equal(entries(deep)[0]!.metric, Array(DEFAULT_FEEDBACK_LIMITS.maxDepth).fill('k').join('.'));
});

test('tags: string values, bounded count and lengths, __proto__ kept as a plain key', () => {
  const r = flat({}, { tags: JSON.parse('{"env":"prod","__proto__":"x"}') });
  assert.ok(r.ok);
  assert.deepEqual(Object.entries(r.tags), [['env', 'prod'], ['__proto__', 'x']]);
  assert.equal(error({ id: ID, feedback: {}, tags: ['a'] }), 'tags must be an object of string values; got array');
  assert.equal(error({ id: ID, feedback: {}, tags: { n: 1 } }), 'tags.n must be a string; got number');
  assert.equal(error({ id: ID, feedback: {}, tags: { '': 'v' } }), 'tags: keys must not be empty');
  const l = resolveLimits({ maxTags: 2, maxTagKeyLength: 3, maxTagValueLength: 4 });
  assert.equal(error({ id: ID, feedback: {}, tags: { a: '', b: '', c: '' } }, l), 'tags: at most 2 tags per event; got 3');
  assert.equal(error({ id: ID, feedback: {}, tags: { abcd: '' } }, l), 'tags: key "abcd" is longer than 3 characters');
  assert.equal(error({ id: ID, feedback: {}, tags: { a: '12345' } }, l), 'tags.a is longer than 4 characters');
});

test('optimize is null when left out (the metric decides), accepts max and min, refuses anything else', () => {
  const r = flat({ x: 1 }, { optimize: 'min' });
  assert.ok(r.ok && r.optimize === 'min');
  assert.equal(error({ id: ID, feedback: {}, optimize: 'up' }), 'optimize must be "max" or "min"; got "up"');
  assert.equal(error({ id: ID, feedback: {}, optimize: 1 }), 'optimize must be "max" or "min"; got number');
});

test('limits: overrides merge onto defaults; bad overrides are refused', () => {
  assert.equal(resolveLimits({ maxDepth: 2 }).maxDepth, 2);
  assert.equal(resolveLimits({ maxDepth: 2 }).maxTags, DEFAULT_FEEDBACK_LIMITS.maxTags);
  assert.throws(() => resolveLimits({ maxDepth: 0 }), /maxDepth must be a positive integer/);
  assert.throws(() => resolveLimits({ nope: 1 } as never), /unknown feedback limit 'nope'/);
});
