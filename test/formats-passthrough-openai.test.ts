// The OpenAI same-format stream relay rewrites most chunks by splicing strings, without parsing them.
// Checked here against a plain reference (parse every chunk, set id and model, drop hidden usage):
// the client must see the same JSON and the gateway must observe the same finish reason and usage,
// whatever the content holds (marker look-alikes, escapes, unicode) and with usage shown or hidden.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openaiChatPassthrough } from '../src/formats/passthrough/openai-chat.ts';
import { createSseParser, type SseFrame } from '../src/formats/sse.ts';

type Rec = Record<string, unknown>;
const ID = '01a1fda7-335c-71a2-8953-d37d7b0b1f27';
const MODEL = 'openai/gpt-4o-mini';

const chunk = (delta: Rec, finish: string | null, extra: Rec = {}): Rec => ({
  id: 'chatcmpl-abc', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'gpt-4o-mini', ...extra,
  choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
});

const TRICKY = [
  'plain', '"usage":{"prompt_tokens":1}', '"error"', 'error', '"finish_reason":"length"', ',"usage":null', 'usage":null',
  '"id":"chatcmpl-abc"', '"model":"gpt-4o-mini"', 'back\\slash "quoted"', 'naïve 世界 🎉', '\\"finish_reason\\":\\"x\\"', '',
];

function streams(): Rec[][] {
  const out: Rec[][] = [];
  for (const text of TRICKY) {
    for (const usageNull of [false, true]) {
      const extra = usageNull ? { usage: null } : {};
      out.push([
        chunk({ role: 'assistant', content: '' }, null, extra),
        chunk({ content: text }, null, extra),
        chunk({ content: text.length > 2 ? text.slice(1) : text }, null, extra),
        chunk({}, 'stop', extra),
        { id: 'chatcmpl-abc', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'gpt-4o-mini', choices: [],
          usage: { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 } },
      ]);
    }
  }
  // Tool call deltas carry ids of their own; a finish reason with an escape takes the parsing path.
  out.push([
    chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '' } }] }, null),
    chunk({ tool_calls: [{ index: 0, function: { arguments: '{"id":"chatcmpl-abc","q":"\\"usage\\":{"}' } }] }, null),
    chunk({}, 'tool_calls'),
  ]);
  out.push([chunk({ content: 'a' }, null), chunk({}, 'weird\\reason')]);
  // Fields in another order than OpenAI's (model before id).
  out.push([
    { model: 'gpt-4o-mini', id: 'chatcmpl-abc', choices: [{ index: 0, delta: { content: 'x' }, finish_reason: null }] },
    { model: 'gpt-4o-mini', id: 'chatcmpl-abc', choices: [{ index: 0, delta: { content: 'y' }, finish_reason: 'stop' }] },
  ]);
  // First chunk with a nested id before the top-level one, and ids that need escapes.
  out.push([
    { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_9', type: 'function', function: { name: 'f', arguments: '' } }] }, finish_reason: null }], id: 'chatcmpl-x', model: 'm' },
    { choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }], id: 'chatcmpl-x', model: 'm' },
  ]);
  out.push([
    { id: 'odd"id\\', model: 'mod"el', choices: [{ index: 0, delta: { content: 'x' }, finish_reason: null }] },
    { id: 'odd"id\\', model: 'mod"el', choices: [{ index: 0, delta: { content: 'y' }, finish_reason: 'stop' }] },
  ]);
  return out;
}

function reference(chunks: Rec[], includeUsage: boolean): { frames: Rec[]; finish: string | null; usage: unknown } {
  const frames: Rec[] = [];
  let finish: string | null = null;
  let usage: unknown = null;
  let delta = false;
  for (const c of chunks) {
    const x = structuredClone(c);
    x.id = ID;
    x.model = MODEL;
    // The first delta names the role, given it when the server did not (OpenAI's SDK requires it).
    const first = (x.choices as Rec[])[0];
    if (!delta && first?.delta) { delta = true; (first.delta as Rec).role ??= 'assistant'; }
    const f = (x.choices as Rec[])[0]?.finish_reason;
    if (typeof f === 'string') finish = f;
    if (x.usage) usage = x.usage;
    if (!includeUsage) {
      if (x.usage && (x.choices as Rec[]).length === 0) continue;
      delete x.usage;
    }
    frames.push(x);
  }
  return { frames, finish, usage };
}

function relay(chunks: Rec[], includeUsage: boolean, cut: number): { frames: Rec[]; finish: string | null; usage: unknown } {
  const wire = Buffer.from(chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join('') + 'data: [DONE]\n\n');
  const parser = createSseParser();
  const s = openaiChatPassthrough.newStream({ id: ID, model: MODEL, includeUsage });
  let out = '';
  const run = (fs: SseFrame[]): void => { for (const f of fs) out += s.frame(f); };
  run(parser.push(wire.subarray(0, cut)));
  run(parser.push(wire.subarray(cut)));
  run(parser.end());
  out += s.end();
  const back = createSseParser();
  const frames = [...back.push(Buffer.from(out)), ...back.end()].map((f) => f.data);
  assert.equal(frames.pop(), '[DONE]');
  const seen = s.observed();
  return { frames: frames.map((d) => JSON.parse(d) as Rec), finish: seen.finishReason, usage: seen.usage ? { prompt_tokens: seen.usage.input_tokens + seen.usage.cache_read_input_tokens, completion_tokens: seen.usage.output_tokens } : null };
}

test('spliced chunks equal the parsed reference: same JSON to the client, same finish reason and usage observed', () => {
  let cases = 0;
  for (const chunks of streams()) {
    for (const includeUsage of [false, true]) {
      const want = reference(chunks, includeUsage);
      const total = chunks.reduce((n, c) => n + JSON.stringify(c).length + 8, 0);
      for (const cut of [0, 7, Math.floor(total / 2), total]) {
        const got = relay(chunks, includeUsage, cut);
        assert.deepEqual(got.frames, want.frames);
        assert.equal(got.finish, want.finish);
        const u = want.usage as { prompt_tokens: number; completion_tokens: number } | null;
        assert.deepEqual(got.usage, u ? { prompt_tokens: u.prompt_tokens, completion_tokens: u.completion_tokens } : null);
        cases++;
      }
    }
  }
  assert.ok(cases > 100);
});
