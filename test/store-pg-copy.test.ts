// COPY's text format as the PostgreSQL store writes it (the round trip through a real server is in
// store-contract.test.ts): nulls, booleans, numbers and every character the format gives a meaning.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { copyLine, copyValue } from '../src/store/pg-copy.ts';

test('copyValue: null, booleans, numbers and plain text', () => {
  assert.equal(copyValue(null), '\\N');
  assert.equal(copyValue(true), 't');
  assert.equal(copyValue(false), 'f');
  assert.equal(copyValue(42), '42');
  assert.equal(copyValue(-0.5), '-0.5');
  assert.equal(copyValue('openai/gpt-4o-mini'), 'openai/gpt-4o-mini');
  assert.equal(copyValue(''), '');
});

test('copyValue: backslash, tab, newline and carriage return are escaped; NUL becomes U+FFFD', () => {
  assert.equal(copyValue('a\\b'), 'a\\\\b');
  assert.equal(copyValue('\\N'), '\\\\N', 'the text \\N is not a null');
  assert.equal(copyValue('a\tb\nc\rd'), 'a\\tb\\nc\\rd');
  assert.equal(copyValue('x\0y'), 'x\uFFFDy');
});

test('copyValue refuses numbers the server would not parse', () => {
  assert.throws(() => copyValue(Number.NaN), /NaN/);
  assert.throws(() => copyValue(Number.POSITIVE_INFINITY), /Infinity/);
});

test('copyLine: tab-separated values ending in a newline', () => {
  assert.equal(copyLine(['id-1', null, 3, false, 'a\tb']), 'id-1\t\\N\t3\tf\ta\\tb\n');
  assert.equal(copyLine([null]), '\\N\n');
});
