// Row helpers shared by both stores: timestamps already in toISOString() form skip the Date round
// trip, and every other input still normalizes (or fails) exactly as Date does.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertStorable, isCanonicalIso, iso, isoOrNull } from '../src/store/rows.ts';
import type { InferenceRecord } from '../src/store/types.ts';

test('canonical timestamps are recognized, and only those Date would print back unchanged', () => {
  for (const s of ['2026-01-01T00:00:00.000Z', '2024-02-29T12:00:00.000Z', '2000-02-29T00:00:00.000Z', '2026-04-30T23:59:59.999Z', '0000-01-01T00:00:00.000Z']) {
    assert.equal(isCanonicalIso(s), true, s);
    assert.equal(new Date(s).toISOString(), s);
  }
  for (const s of ['2023-02-29T00:00:00.000Z', '1900-02-29T00:00:00.000Z', '2026-04-31T00:00:00.000Z', '2026-01-01T24:00:00.000Z',
    '2026-01-01T00:00:00Z', '2026-01-01T00:00:00.000+00:00', '2026-13-01T00:00:00.000Z', '2026-01-00T00:00:00.000Z', '+012026-01-01T00:00:00.000Z']) {
    assert.equal(isCanonicalIso(s), false, s);
  }
});

test('iso normalizes every accepted form the way Date does and rejects the rest', () => {
  const cases = ['2023-02-29T10:00:00.000Z', '2026-04-31T00:00:00.000Z', '2026-01-01T24:00:00.000Z', '2026-01-01T00:00:00Z',
    '2026-01-01T01:00:00.000+01:00', '2026-01-01', '2026-06-15T08:30:00.123Z'];
  for (const s of cases) assert.equal(iso(s), new Date(s).toISOString(), s);
  assert.equal(iso(new Date(Date.UTC(2026, 0, 2))), '2026-01-02T00:00:00.000Z');
  assert.equal(isoOrNull(null), null);
  assert.throws(() => iso('2026-02-30T00:00:00.000X'), TypeError);
  assert.throws(() => iso('not a time'), TypeError);
  assert.throws(() => iso(undefined), TypeError);
});

test('assertStorable takes canonical and other parseable times, refuses bad times and costs', () => {
  const base = { createdAt: '2026-01-01T00:00:00.000Z', costUsd: '0.5' } as InferenceRecord;
  assertStorable(base);
  assertStorable({ ...base, createdAt: '2026-01-01T00:00:00+02:00' });
  assert.throws(() => assertStorable({ ...base, createdAt: 'yesterday' }), TypeError);
  assert.throws(() => assertStorable({ ...base, costUsd: '1e-7' }), TypeError);
});
