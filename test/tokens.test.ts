// Prompt token counting (src/tokens): exact OpenAI-family counts against the providers' documented
// usage, the estimate for other families, the parts that make a count inexact, and the size limit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { countPromptTokens, tokenizerFor, warmTokenizers, estimateTextTokens } from '../src/tokens/index.ts';
import type { CanonicalRequest } from '../src/formats/canonical.ts';

const req = (over: Partial<CanonicalRequest>): CanonicalRequest => ({ model: 'x', system: [], messages: [], stream: false, ...over });
const user = (text: string) => ({ role: 'user' as const, content: [{ type: 'text' as const, text }] });

test('tokenizer families from model names', () => {
  assert.deepEqual(tokenizerFor('openai/gpt-4o-mini'), { kind: 'exact', encoding: 'o200k_base' });
  assert.deepEqual(tokenizerFor('azure/gpt-5.2'), { kind: 'exact', encoding: 'o200k_base' });
  assert.deepEqual(tokenizerFor('openai/o3-mini'), { kind: 'exact', encoding: 'o200k_base' });
  assert.deepEqual(tokenizerFor('groq/openai/gpt-oss-120b'), { kind: 'exact', encoding: 'o200k_base' });
  assert.deepEqual(tokenizerFor('openai/gpt-4-turbo'), { kind: 'exact', encoding: 'cl100k_base' });
  assert.deepEqual(tokenizerFor('openai/gpt-3.5-turbo'), { kind: 'exact', encoding: 'cl100k_base' });
  assert.deepEqual(tokenizerFor('bedrock/us.anthropic.claude-sonnet-4-5-v1:0'), { kind: 'estimate', family: 'anthropic' });
  assert.deepEqual(tokenizerFor('anthropic/claude-haiku-4-5'), { kind: 'estimate', family: 'anthropic' });
  assert.deepEqual(tokenizerFor('google/gemini-2.5-flash'), { kind: 'estimate', family: 'gemini' });
  assert.deepEqual(tokenizerFor('together/meta-llama/Llama-3.3-70B'), { kind: 'estimate', family: 'generic' });
});

test('OpenAI chat: the API reference example (system + "Hello!") is 19 prompt tokens, exact', async () => {
  await warmTokenizers();
  const c = countPromptTokens(req({ system: [{ type: 'text', text: 'You are a helpful assistant.' }], messages: [user('Hello!')] }), 'openai/gpt-4o');
  assert.deepEqual(c, { tokens: 19, exact: true, method: 'o200k_base', ceiling: 19 });
});

test('Anthropic: the count_tokens documented example (14 tokens) by estimate, marked inexact', () => {
  const c = countPromptTokens(req({ system: [{ type: 'text', text: 'You are a scientist' }], messages: [user('Hello, Claude')] }), 'anthropic/claude-sonnet-4-5');
  assert.equal(c.tokens, 14);
  assert.equal(c.exact, false);
  assert.equal(c.method, 'estimate:anthropic');
  assert.ok(c.ceiling >= c.tokens * 1.5);
});

test('images and tools make an OpenAI count inexact, with a ceiling above the count', async () => {
  await warmTokenizers();
  const withImage = req({ messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image', source: { type: 'url', url: 'https://x/y.png' } }] }] });
  const a = countPromptTokens(withImage, 'openai/gpt-4o');
  assert.equal(a.exact, false);
  assert.equal(a.method, 'o200k_base+estimate');
  assert.ok(a.tokens > 765 && a.ceiling > a.tokens);
  const withTools = req({ messages: [user('weather?')], tools: [{ name: 'get_weather', description: 'Weather for a city', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }] });
  const b = countPromptTokens(withTools, 'openai/gpt-4o');
  assert.equal(b.exact, false);
  assert.ok(b.tokens > countPromptTokens(req({ messages: [user('weather?')] }), 'openai/gpt-4o').tokens + 10);
});

test('a prompt above maxExactChars is estimated, never encoded on the event loop', async () => {
  await warmTokenizers();
  const long = req({ messages: [user('word '.repeat(20_000))] });
  const c = countPromptTokens(long, 'openai/gpt-4o', { maxExactChars: 10_000 });
  assert.equal(c.method, 'estimate:size');
  assert.equal(c.exact, false);
  const exact = countPromptTokens(long, 'openai/gpt-4o', { maxExactChars: 1_000_000 });
  assert.ok(Math.abs(c.tokens - exact.tokens) / exact.tokens < 0.15, `${c.tokens} vs ${exact.tokens}`);
  assert.ok(c.ceiling >= exact.tokens);
});

test('the estimate follows text shape: CJK and code are not chars/4', () => {
  assert.equal(estimateTextTokens(''), 0);
  const cjk = '这是一个用于测试的中文句子，它包含了很多汉字。'.repeat(4);
  assert.ok(estimateTextTokens(cjk) > cjk.length / 2, 'CJK is about one token per 1-1.5 characters');
  assert.ok(Math.abs(estimateTextTokens('The quick brown fox jumps over the lazy dog.') - 10) <= 1);
});

test('short texts are counted once per encoding too: a repeated short prompt is exact from the cache, even with no budget left', async () => {
  await warmTokenizers();
  const { exactCounter } = await import('../src/tokens/encoders.ts');
  const { PromptTokens, promptParts } = await import('../src/tokens/index.ts');
  const text = `You are a terse assistant ${process.pid}.`;
  const o200k = exactCounter('o200k_base')!;
  assert.equal(o200k.cached(text), -1, 'not counted yet');
  const first = countPromptTokens(req({ messages: [user(text)] }), 'openai/gpt-4o');
  assert.equal(first.exact, true);
  assert.equal(o200k.cached(text), first.tokens - 7, 'the text alone (7 tokens of framing)');
  const again = new PromptTokens(promptParts(req({ messages: [user(text)] })), { exactChars: 0, boundChars: 0 }).count({ kind: 'exact', encoding: 'o200k_base' });
  assert.deepEqual(again, first);
  assert.equal(exactCounter('cl100k_base')!.cached(text), -1, 'per encoding');
});
