// Counting a long text slice by slice (src/tokens/slices.ts) must give exactly the whole text's count
// in both exact encodings: checked on random text over an alphabet chosen to hit every pre-tokenizer
// alternative next to the cuts (letters of every case and script, digits, punctuation, apostrophes,
// runs of spaces, newlines, special-token text), and on the shapes that matter in prompts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { countTokens as o200k } from 'gpt-tokenizer/encoding/o200k_base';
import { countTokens as cl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { countInSlices, sliceEnds } from '../src/tokens/slices.ts';
import { estimateTextTokens, estimateShape, textShape, textShapeSliced } from '../src/tokens/estimate.ts';

const NO_SPECIAL = { disallowedSpecial: new Set<string>() };
const encodings = { o200k_base: (s: string) => o200k(s, NO_SPECIAL), cl100k_base: (s: string) => cl100k(s, NO_SPECIAL) };
const now = (): Promise<void> => Promise.resolve();

const PIECES = [
  'a', 'Z', 'é', 'É', 'ǅ', 'ß', 'ʰ', '中', '文', 'ا', 'й', 'Ж', '\u0301', ' ', ' ', ' ', '  ', '\t', '\n', '\r\n', '0', '7', '42', "'s", "'LL", "'", '.', ',', '!', '?', '-', '/', '_',
  '<|endoftext|>', '😀', 'the', 'The', 'HTTP', 'getUserName', ' I', ' a', 'x ', ' ',
];

test('slice ends: about the asked size, cut only before a space between letters, the last at the end', () => {
  const s = 'lorem ipsum dolor sit amet '.repeat(400);
  const ends = sliceEnds(s, 1000);
  assert.equal(ends.at(-1), s.length);
  assert.ok(ends.length >= 10, `${ends.length} slices`);
  let from = 0;
  for (const e of ends.slice(0, -1)) {
    assert.ok(e - from >= 1000 && e - from < 1010, `slice of ${e - from}`);
    assert.equal(s[e], ' ');
    assert.match(s[e - 1]! + s[e + 1]!, /^\p{L}\p{L}$/u);
    from = e;
  }
  // No cut anywhere: one slice, however long.
  assert.deepEqual(sliceEnds('x'.repeat(5000), 100), [5000]);
  assert.deepEqual(sliceEnds('short text', 100), [10]);
});

for (const [name, count] of Object.entries(encodings)) {
  test(`${name}: the sum over slices equals the whole count (random text, small slices)`, async () => {
    await fc.assert(fc.asyncProperty(
      fc.array(fc.constantFrom(...PIECES), { minLength: 1, maxLength: 400 }), fc.integer({ min: 1, max: 40 }),
      async (parts, size) => {
        const s = parts.join('');
        assert.equal(await countInSlices(s, size, count, now), count(s), JSON.stringify(s));
      },
    ), { numRuns: 400 });
  });

  test(`${name}: prompt-shaped text (prose, code, JSON, markdown) in 4096-character slices`, async () => {
    const prose = 'The gateway routes each prompt to the model that gives the best answer within the budget. ';
    const code = 'function add(a, b) {\n  return a + b; // sum\n}\nconst xs = [1, 2, 3].map((x) => x * 2);\n';
    const json = JSON.stringify({ name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } } } });
    const md = '## Heading\n\n- item one\n- item two\n\n```ts\nlet y = 1;\n```\n\nSome *emphasis* and a [link](https://example.com).\n';
    for (const s of [prose.repeat(500), code.repeat(400), json.repeat(200), md.repeat(300), (prose + code + json + md).repeat(150)]) {
      let pauses = 0;
      const n = await countInSlices(s, 4096, count, async () => { pauses++; });
      assert.equal(n, count(s));
      assert.equal(pauses, sliceEnds(s, 4096).length - 1);
    }
  });
}

test('the estimate a slice at a time is the estimate of the whole (textShape adds up at the cuts)', async () => {
  await fc.assert(fc.asyncProperty(
    fc.array(fc.constantFrom(...PIECES, 'extraordinarily', 'a', 'b c', '   '), { minLength: 1, maxLength: 400 }), fc.integer({ min: 1, max: 40 }),
    async (parts, size) => {
      const s = parts.join('');
      const shape = await textShapeSliced(s, size, now);
      assert.deepEqual(shape, textShape(s), JSON.stringify(s));
      assert.equal(Math.max(1, Math.round(estimateShape(shape))), estimateTextTokens(s), JSON.stringify(s));
    },
  ), { numRuns: 400 });
});
