// extractPromptFeatures: determinism, JSON-ability, bounds, task kinds and prompt statistics.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { extractPromptFeatures, estimateTokens, FEATURE_SCHEMA } from '../src/router/quality/index.ts';
import { FEATURE_DIM } from '../src/router/quality/hashing.ts';
import { SHAPE } from '../src/router/quality/features.ts';

const cos = (a: { idx: number[]; val: number[] }, b: { idx: number[]; val: number[] }) => {
  const m = new Map(a.idx.map((i, k) => [i, a.val[k]!]));
  return b.idx.reduce((s, i, k) => s + (m.get(i) ?? 0) * b.val[k]!, 0);
};

test('features are deterministic, plain JSON, unit length, unique in-range indices', () => {
  const input = { system: 'You are terse.', turns: ['Hello', 'Hi! How can I help?', 'Tell me about the moons of Jupiter.'] };
  const f = extractPromptFeatures(input);
  assert.equal(f.schema, FEATURE_SCHEMA);
  assert.deepEqual(extractPromptFeatures(input), f);
  assert.deepEqual(JSON.parse(JSON.stringify(f)), f);
  assert.equal(new Set(f.idx).size, f.idx.length);
  assert.equal(f.idx.length, f.val.length);
  for (const i of f.idx) assert.ok(Number.isInteger(i) && i >= 0 && i < FEATURE_DIM);
  const norm = f.val.reduce((s, v) => s + v * v, 0);
  assert.ok(Math.abs(norm - 1) < 0.01, `norm ${norm}`);
  assert.equal(f.stats.turns, 3);
  assert.equal(f.stats.lastChars, 'Tell me about the moons of Jupiter.'.length);
  // The system prompt is part of the features.
  assert.notDeepEqual(extractPromptFeatures({ turns: input.turns }).idx, f.idx);
});

test('similar prompts are closer than unrelated ones', () => {
  const a = extractPromptFeatures({ turns: ['Write a Python function that sorts a list of integers in place.'] });
  const b = extractPromptFeatures({ turns: ['Write a Python function that sorts a list of strings by length.'] });
  const c = extractPromptFeatures({ turns: ['What were the main causes of the French Revolution?'] });
  assert.ok(cos(a, b) > cos(a, c) + 0.2, `${cos(a, b)} vs ${cos(a, c)}`);
});

test('task kinds', () => {
  const kind = (text: string, flags: Record<string, unknown> = {}) => extractPromptFeatures({ turns: [text], ...flags }).kind;
  assert.equal(kind('Write a Python function to reverse a linked list.\n```python\ndef reverse(head):\n    pass\n```'), 'code');
  assert.equal(kind('Solve for x: 3x + 5 = 20. What is the value of x?'), 'math');
  assert.equal(kind('Which planet is largest?\nA) Mars\nB) Jupiter\nC) Venus\nD) Earth\nAnswer:'), 'multiple_choice');
  assert.equal(kind('Look up the weather in Paris', { tools: 2 }), 'tool_use');
  assert.equal(kind('What is in this picture?', { images: 1 }), 'vision');
  assert.equal(kind('Give me the name and age of each person in the text.', { jsonOutput: true }), 'extraction');
  assert.equal(kind('Translate "good morning" into French.'), 'translation');
  assert.equal(kind('Summarize this article in three bullet points: the council met on Tuesday and agreed ...'), 'summarization');
  assert.equal(kind('Write a poem about the sea at night.'), 'writing');
  assert.equal(kind('hi there, how are you today'), 'chat');
  assert.equal(extractPromptFeatures({ turns: [] }).kind, 'chat');
});

test('statistics: given token counts win, estimates count other scripts denser', () => {
  assert.equal(extractPromptFeatures({ turns: ['abc def'], promptTokens: 42 }).stats.tokens, 42);
  assert.equal(estimateTokens('a'.repeat(400)), 100);
  assert.ok(estimateTokens('日本語のテキスト'.repeat(50)) > 250);
  const f = extractPromptFeatures({ turns: ['日本語のテキストです。'] });
  assert.ok(f.stats.nonAscii > 0.9);
  assert.ok(f.idx.length > 0, 'text without spaces still has features (each ideograph is a word)');
  const g = extractPromptFeatures({ turns: ['line one\nline two?\nline three?'], tools: -3, images: 2, jsonOutput: true });
  assert.deepEqual([g.stats.lines, g.stats.questions, g.stats.tools, g.stats.images, g.stats.json], [3, 2, 0, 2, true]);
});

test('cost is bounded for huge prompts: the vector stays small and extraction fast', () => {
  const huge = 'The quick brown fox jumps over the lazy dog. '.repeat(50_000) + 'Now, what colour was the fox?';
  const t0 = performance.now();
  const f = extractPromptFeatures({ system: huge, turns: [huge, huge] });
  const ms = performance.now() - t0;
  assert.ok(f.idx.length <= SHAPE.keep + 64, `${f.idx.length} features`);
  assert.ok(ms < 1000, `${ms} ms`); // generous: a shared machine; typical prompts take tens of microseconds
  assert.equal(f.stats.chars, huge.length * 3 + 2); // system, newline, turn, newline, turn
});

test('lines and non-ASCII characters are counted in the unhashed middle of a long prompt too', () => {
  const plain = 'word '.repeat(2000);
  // Newlines and non-ASCII only in the middle (outside the hashed head and tail slices).
  const middle = 'é\n'.repeat(30);
  const text = plain + middle + plain;
  const f = extractPromptFeatures({ turns: [text] });
  assert.equal(f.stats.lines, 31);
  assert.equal(f.stats.nonAscii, Math.round((30 / text.length) * 1e4) / 1e4);
  const ascii = extractPromptFeatures({ turns: [plain + '\n\n' + plain] });
  assert.deepEqual([ascii.stats.lines, ascii.stats.nonAscii], [3, 0]);
  // Across turns and a system prompt: each join adds a line.
  const g = extractPromptFeatures({ system: plain + '\n' + plain, turns: [text, plain] });
  assert.equal(g.stats.lines, 1 + 1 + 30 + 1 + 1);
});

test('a conversation resent with a new turn: earlier turns counted from the cache give the same stats as counting afresh', () => {
  const turn = (i: number) => `turn ${i}: ${'naïve café\n'.repeat(40 + i)}${'word '.repeat(300)}`;
  const turns = Array.from({ length: 12 }, (_, i) => turn(i));
  const first = extractPromptFeatures({ turns });
  // The same texts as new string objects (as a new request's JSON gives them), then with a turn more.
  const again = extractPromptFeatures({ turns: turns.map((t) => JSON.parse(JSON.stringify(t)) as string) });
  assert.deepEqual(again, first);
  const longer = extractPromptFeatures({ turns: [...turns, turn(99)] });
  const expectedLines = turns.concat(turn(99)).reduce((n, t) => n + t.split('\n').length - 1, 0) + 13;
  assert.equal(longer.stats.lines, expectedLines);
  const chars = turns.concat(turn(99)).reduce((n, t) => n + t.length, 12);
  const nonAscii = turns.concat(turn(99)).reduce((n, t) => n + [...t].filter((c) => c.charCodeAt(0) > 127).length, 0);
  assert.equal(longer.stats.nonAscii, Math.round((nonAscii / chars) * 1e4) / 1e4);
});
