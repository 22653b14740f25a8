// jsonDepth (src/util/parse-json.ts) skips strings with native searches: it must agree with the plain
// byte-by-byte scan on every input, escapes, unterminated strings and malformed JSON included, and
// stop early once the depth passes the limit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { jsonDepth } from '../src/util/parse-json.ts';

/** The reference: one byte at a time, a backslash in a string skipping the next byte. */
function byteScan(buf: Uint8Array, max: number): number {
  let depth = 0, peak = 0, inString = false;
  for (let i = 0; i < buf.length; i++) {
    const c = buf[i]!;
    if (inString) { if (c === 0x5c) i++; else if (c === 0x22) inString = false; }
    else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) { if (++depth > peak) { peak = depth; if (peak > max) return peak; } }
    else if (c === 0x7d || c === 0x5d) depth--;
  }
  return peak;
}

test('jsonDepth agrees with the byte-by-byte scan on any mix of quotes, backslashes, brackets and text', () => {
  // Runs of each character, so long strings (past the short-string loop) and long backslash runs occur.
  const piece = fc.tuple(fc.constantFrom('"', '\\', '[', ']', '{', '}', 'a', ' ', ':', ',', 'é'), fc.integer({ min: 1, max: 40 })).map(([c, n]) => c.repeat(n));
  fc.assert(fc.property(fc.array(piece, { maxLength: 60 }), fc.integer({ min: 1, max: 8 }), (parts, max) => {
    const buf = Buffer.from(parts.join(''));
    assert.equal(jsonDepth(buf, max), byteScan(buf, max));
  }), { numRuns: 5000 });
});

test('jsonDepth on real JSON: the depth of what JSON.stringify wrote, strings full of escapes included', () => {
  const nest = (d: number, leaf: unknown): unknown => (d === 0 ? leaf : d % 2 ? [nest(d - 1, leaf)] : { k: nest(d - 1, leaf) });
  const texts = ['plain', 'a "quoted" word', 'back\\slash\\', '\\"', 'line\nbreak\ttab', 'x'.repeat(100) + '"' + 'y'.repeat(100), '\\'.repeat(33) + '"'];
  for (const t of texts) for (const d of [1, 2, 5, 9]) {
    const buf = Buffer.from(JSON.stringify({ s: t, v: nest(d, t), after: [t, { t }] }));
    assert.equal(jsonDepth(buf, 64), byteScan(buf, 64), `${JSON.stringify(t)} at ${d}`);
    assert.equal(jsonDepth(buf, 64), Math.max(d + 1, 3));
  }
});

test('jsonDepth stops once the limit is passed, however long the rest', () => {
  const deep = Buffer.from('['.repeat(70) + '"' + 'x'.repeat(5_000_000) + '"' + ']'.repeat(70));
  const t0 = performance.now();
  assert.equal(jsonDepth(deep, 64), 65);
  assert.ok(performance.now() - t0 < 50);
});
