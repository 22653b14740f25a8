// A run of characters without whitespace is one BPE piece, quadratic to encode (gpt-tokenizer, on the
// event loop): one run of 16,384 random CJK characters took 0.4-0.7 s to count for count_tokens, the
// router and the chat reservation, 65,536 took 6.4 s. Such text is estimated (src/tokens/exact-cost.ts,
// measure.ts MAX_EXACT_RUN), and a reservation takes it at its ceiling, never below the real count.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { countTokens as o200k } from 'gpt-tokenizer/encoding/o200k_base';
import { countPromptTokens, warmTokenizers } from '../src/tokens/index.ts';
import { PromptTokens } from '../src/tokens/measure.ts';
import { promptParts } from '../src/tokens/prompt.ts';
import { tokenizerFor } from '../src/tokens/families.ts';
import { hasRunOver } from '../src/tokens/exact-cost.ts';
import type { CanonicalRequest } from '../src/formats/canonical.ts';

function randomCjk(n: number, run: number): string {
  let seed = 99, s = '';
  for (let i = 0; i < n; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    s += String.fromCharCode(0x4e00 + (seed % 20000));
    if (run > 0 && i % run === run - 1) s += ' ';
  }
  return s;
}
const req = (text: string): CanonicalRequest => ({ messages: [{ role: 'user', content: [{ type: 'text', text }] }], system: [], tools: [] } as unknown as CanonicalRequest);

test('hasRunOver finds a run of non-whitespace longer than the limit, whitespace of every kind ending one', () => {
  assert.equal(hasRunOver('a'.repeat(10), 10), false);
  assert.equal(hasRunOver('a'.repeat(11), 10), true);
  assert.equal(hasRunOver(`${'a'.repeat(10)} ${'b'.repeat(10)}\n${'c'.repeat(10)}\t${'d'.repeat(10)}`, 10), false);
  assert.equal(hasRunOver(`${'a'.repeat(5)} ${'b'.repeat(11)}`, 10), true);
});

test('a prompt with one run of 16,384 CJK characters is counted without holding the event loop; the reservation is never below the count', async () => {
  await warmTokenizers();
  const s = randomCjk(16_384, 0);
  const t0 = performance.now();
  const c = countPromptTokens(req(s), 'gpt-4o');
  const ms = performance.now() - t0;
  assert.ok(ms < 100, `count_tokens took ${ms.toFixed(0)} ms`);
  assert.equal(c.exact, false);
  const real = o200k(s);
  assert.ok(c.ceiling >= real, `ceiling ${c.ceiling} >= ${real}`);
  // The reservation (4,096 exact characters, as src/http/reservation-estimate.ts) of a 4,000-character run.
  const short = randomCjk(4000, 0);
  const p = new PromptTokens(promptParts(req(short)), { exactChars: 0, boundChars: 4096 });
  assert.ok(p.reserve(tokenizerFor('gpt-4o')) >= o200k(short), 'reserved at least the count');
  // Text with whitespace between short runs is still counted exactly.
  const spaced = randomCjk(2000, 30);
  const e = countPromptTokens(req(spaced), 'gpt-4o');
  assert.equal(e.exact, true);
});
