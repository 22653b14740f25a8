// The strict token ceiling behind the hard max_cost (src/tokens/ceiling.ts, measure.ts): no byte-level
// tokenizer makes more tokens than bytes (checked on both exact encodings over texts built to be
// expensive: digits, CJK, emoji, whitespace runs, control characters, code), every family's ceiling
// covers its count, and long new text is estimated for ranking but counted exactly where a bound needs it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { countTokens as o200k } from 'gpt-tokenizer/encoding/o200k_base';
import { countTokens as cl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { countPromptTokens, promptParts, PromptTokens, warmTokenizers, type TokenizerId } from '../src/tokens/index.ts';
import { IMAGE_CEILING } from '../src/tokens/ceiling.ts';
import type { CanonicalRequest } from '../src/formats/canonical.ts';

const NO_SPECIAL = { disallowedSpecial: new Set<string>() };
const req = (over: Partial<CanonicalRequest>): CanonicalRequest => ({ model: 'x', system: [], messages: [], stream: false, ...over });
const user = (text: string) => ({ role: 'user' as const, content: [{ type: 'text' as const, text }] });
function rnd(seed: number) { let s = seed; return () => { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; return s / 2 ** 32; }; }

/** Texts that cost many tokens per character: digits, CJK, emoji (surrogate pairs), lone surrogates, odd whitespace, controls, code. */
function nastyTexts(): string[] {
  const r = rnd(7);
  const pools = ['0123456789', '这是一个用于测试的中文句子汉字', '😀🎉🚀👍🏽🧪', '\ud800\udfff\udbff', ' \t\n\r\u000b\u00a0\u2028', '\u0000\u0001\u001f\u007f', '{}[]();:=>!&|^~`@#$%', 'éàüßøñçÆŒ', 'Ѐ-ӿ ΑΩ', 'abc xyz Qq'];
  const out = ['', 'a', ' ', '1', '😀', '<|endoftext|>', '<|im_start|>user'];
  for (let i = 0; i < 300; i++) {
    const pool = pools[i % pools.length]!;
    const mix = i % 3 === 0 ? pools.join('') : pool;
    out.push(Array.from({ length: 1 + Math.floor(r() * 200) }, () => mix[Math.floor(r() * mix.length)]).join(''));
  }
  return out;
}

test('no exact encoding makes more tokens than the UTF-8 bytes of the text (the premise of the bytes ceiling)', () => {
  for (const t of nastyTexts()) {
    const bytes = Buffer.byteLength(t, 'utf8');
    assert.ok(o200k(t, NO_SPECIAL) <= bytes, `o200k ${JSON.stringify(t.slice(0, 40))}`);
    assert.ok(cl100k(t, NO_SPECIAL) <= bytes, `cl100k ${JSON.stringify(t.slice(0, 40))}`);
  }
});

test('every family: the ceiling covers the count and any byte-level tokenization of the text', async () => {
  await warmTokenizers();
  const families: TokenizerId[] = [{ kind: 'exact', encoding: 'o200k_base' }, { kind: 'exact', encoding: 'cl100k_base' }, { kind: 'estimate', family: 'anthropic' }, { kind: 'estimate', family: 'gemini' }, { kind: 'estimate', family: 'generic' }];
  const texts = nastyTexts();
  for (let i = 0; i < texts.length; i += 3) {
    const r = req({ system: [{ type: 'text', text: texts[i]! }], messages: [user(texts[i + 1] ?? ''), user(texts[i + 2] ?? '')] });
    const p = new PromptTokens(promptParts(r), { exactChars: 1e9, boundChars: 0 });
    const exactText = [texts[i]!, texts[i + 1] ?? '', texts[i + 2] ?? ''].reduce((n, t) => n + o200k(t, NO_SPECIAL), 0);
    for (const t of families) {
      const c = p.count(t);
      assert.ok(c.ceiling >= c.tokens, `${JSON.stringify(t)} ceiling ${c.ceiling} < tokens ${c.tokens}`);
      assert.ok(p.upper >= c.tokens, 'upper bounds every count');
      if (t.kind === 'estimate') assert.ok(c.ceiling >= exactText, `${t.family} ceiling ${c.ceiling} below the o200k count of its text ${exactText}`);
    }
  }
});

test('text an exact encoding cannot afford is estimated for ranking and counted exactly when a bound needs it', async () => {
  await warmTokenizers();
  const text = Array.from({ length: 2500 }, (_, i) => `word${i % 97} and ${i}`).join(' ');
  const r = req({ messages: [user(text)] });
  const o: TokenizerId = { kind: 'exact', encoding: 'o200k_base' };
  const p = new PromptTokens(promptParts(r), { exactChars: 4096, boundChars: 100_000 });
  const ranked = p.count(o);
  assert.equal(ranked.exact, false);
  assert.equal(ranked.method, 'estimate:size');
  assert.ok(ranked.ceiling >= Buffer.byteLength(text), 'ranking: the bytes ceiling');
  const bound = p.bound(o);
  const exact = countPromptTokens(r, 'openai/gpt-4o', { maxExactChars: 1e9 });
  assert.deepEqual(bound, exact, 'bound(): the exact count, its own ceiling');
  assert.equal(bound.ceiling, bound.tokens);
  // Counted once: the same text in the next request is exact from the cache, whatever the budget.
  assert.equal(new PromptTokens(promptParts(r), { exactChars: 0, boundChars: 0 }).count(o).exact, true);
});

test('images and documents: ceilings from the providers\' documented maxima; a document is unbounded (capped at the context window by the router)', async () => {
  await warmTokenizers();
  const img = { type: 'image' as const, source: { type: 'url' as const, url: 'https://x/y.png' } };
  const r = req({ messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, img, img] }] });
  // Each image at the most the model bills for one (src/tokens/images.ts), the family's ceiling for a model without a rule.
  const a = countPromptTokens(r, 'anthropic/claude-sonnet-4-5');
  assert.ok(a.ceiling >= 2 * 1700 && a.ceiling < 2 * IMAGE_CEILING.anthropic, `${a.ceiling}`);
  assert.ok(countPromptTokens(r, 'anthropic/claude-sonnet-9').ceiling >= 2 * IMAGE_CEILING.anthropic);
  const g = countPromptTokens(r, 'openai/gpt-4o-mini');
  assert.ok(g.ceiling >= 2 * IMAGE_CEILING.openai, 'gpt-4o-mini bills an image up to 48,169 tokens');
  const o = countPromptTokens(r, 'openai/gpt-4o');
  assert.ok(o.ceiling >= 2 * 1445 && o.ceiling < 2 * 1445 + 40, `gpt-4o bills an image up to 1,445 tokens: ${o.ceiling}`);
  const doc = req({ messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0xLjQK' } }] }] });
  assert.equal(countPromptTokens(doc, 'anthropic/claude-sonnet-4-5').ceiling, Number.POSITIVE_INFINITY);
});
