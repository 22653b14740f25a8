// isoFromMs must give exactly Date#toISOString's string: the record timestamps it writes are compared
// and range-queried as text.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isoFromMs } from '../src/util/iso-time.ts';

test('isoFromMs matches Date#toISOString, fractional, negative and six-digit years included', () => {
  const edges = [0, -0.5, -1, -999.5, -1000, -1000.5, 0.999, 999.999, 1000, 1763734056123.9, 253402300799999, 253402300800000,
    -62167219200000, -62167219200001, 8.64e15, -8.64e15];
  for (const ms of edges) assert.equal(isoFromMs(ms), new Date(ms).toISOString(), String(ms));
  // Within one second (the cached prefix) and across seconds, in both directions.
  const base = Date.parse('2026-11-21T14:07:59.990Z');
  for (let d = -2000; d <= 2000; d += 0.7) assert.equal(isoFromMs(base + d), new Date(base + d).toISOString(), String(base + d));
  for (let i = 0; i < 20000; i++) {
    const ms = (Math.random() - 0.5) * 2 * 8.64e15 * (i % 2 ? 1 : 1e-3);
    assert.equal(isoFromMs(ms), new Date(ms).toISOString(), String(ms));
  }
});
