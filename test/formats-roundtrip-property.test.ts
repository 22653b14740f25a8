// Property tests: seeded random canonical requests survive canonical -> wire -> canonical through
// each codec (for what that format can represent), and streams survive being cut anywhere.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Block, CanonicalRequest, Message, StreamEvent, TextBlock, Tool, ToolChoice } from '../src/formats/canonical.ts';
import type { Codec, TargetInfo } from '../src/formats/codec.ts';
import { openaiChatCodec, validateChatRequest } from '../src/formats/openai-chat/index.ts';
import { anthropicMessagesCodec, validateMessagesRequest } from '../src/formats/anthropic-messages/index.ts';
import { claudeThinkingConflict } from '../src/formats/reasoning.ts';

type Fmt = 'openai' | 'anthropic';

/** mulberry32: small, seedable, good enough to explore shapes reproducibly. */
function rng(seed: number) {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (lo: number, hi: number): number => lo + Math.floor(next() * (hi - lo + 1));
  const pick = <T>(xs: readonly T[]): T => xs[int(0, xs.length - 1)]!;
  const maybe = (p = 0.5): boolean => next() < p;
  const word = (): string => pick(['alpha', 'héllo', '世界', 'emoji 🎉', 'line\nbreak', 'quote "x"', '{"json":1}', 'tab\there']);
  const text = (): string => Array.from({ length: int(1, 4) }, word).join(' ');
  return { int, pick, maybe, text };
}
type R = ReturnType<typeof rng>;

const cache = (r: R) => (r.maybe(0.5) ? { type: 'ephemeral' as const } : { type: 'ephemeral' as const, ttl: r.pick(['5m', '1h'] as const) });

function textBlock(r: R, f: Fmt): TextBlock {
  const b: TextBlock = { type: 'text', text: r.text() };
  if (f === 'anthropic' && r.maybe(0.3)) b.cache_control = cache(r);
  return b;
}

function userBlocks(r: R, f: Fmt, pendingTools: string[]): Block[] {
  // Tool results come first in a user turn: that is where OpenAI's tool messages put them.
  const out: Block[] = pendingTools.map((id) => {
    if (f === 'openai') return { type: 'tool_result', tool_use_id: id, content: [{ type: 'text', text: r.text() }] };
    const b: Block = { type: 'tool_result', tool_use_id: id, content: [textBlock(r, f), { type: 'image', source: { type: 'url', url: 'https://e.x/i.png' } }] };
    if (r.maybe()) b.is_error = r.maybe();
    return b;
  });
  const n = pendingTools.length > 0 ? r.int(0, 2) : r.int(1, 3);
  for (let i = 0; i < n; i++) {
    const kind = r.pick(['text', 'text', 'image64', 'imageurl', 'doc'] as const);
    if (kind === 'text') out.push(textBlock(r, f));
    else if (kind === 'image64') out.push({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } });
    else if (kind === 'imageurl') out.push({ type: 'image', source: { type: 'url', url: `https://e.x/${r.int(1, 99)}.jpg` } });
    else if (f === 'openai') out.push({ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERg==' }, title: 'f.pdf' });
    else {
      const doc: Block = { type: 'document', source: r.pick([
        { type: 'base64', media_type: 'application/pdf', data: 'JVBERg==' } as const,
        { type: 'url', url: 'https://e.x/d.pdf' } as const,
        { type: 'text', media_type: 'text/plain', data: r.text() } as const,
      ]) };
      if (r.maybe()) doc.title = r.text();
      if (r.maybe()) doc.context = r.text();
      out.push(doc);
    }
  }
  return out;
}

function assistantBlocks(r: R, f: Fmt, toolIds: string[]): Block[] {
  const out: Block[] = [];
  if (f === 'anthropic' && r.maybe(0.4)) out.push({ type: 'thinking', thinking: r.text(), signature: `gwsig1:anthropic::sig${r.int(0, 999)}` }); // as the client decoder qualifies Claude's own
  if (f === 'anthropic' && r.maybe(0.2)) out.push({ type: 'redacted_thinking', data: `enc${r.int(0, 999)}` });
  const withTools = r.maybe(0.5);
  if (!withTools || r.maybe()) out.push({ type: 'text', text: r.text() });
  if (withTools) {
    for (let i = r.int(1, 3); i > 0; i--) {
      const id = `call_${r.int(0, 1e6)}`;
      toolIds.push(id);
      out.push({ type: 'tool_use', id, name: r.pick(['get_weather', 'search', 'calc']), input: r.pick([{}, { q: r.text() }, { n: r.int(0, 9), nested: { ok: true, list: [1, 'a'] } }]) });
    }
  }
  return out;
}

function tools(r: R, f: Fmt): Tool[] {
  return Array.from({ length: r.int(1, 3) }, (_, i) => {
    const t: Tool = { name: `tool_${i}`, input_schema: { type: 'object', properties: { q: { type: 'string' } } } };
    if (r.maybe()) t.description = r.text();
    if (r.maybe(0.3)) t.strict = r.maybe();
    if (f === 'anthropic' && r.maybe(0.3)) t.cache_control = cache(r);
    return t;
  });
}

function generate(seed: number, f: Fmt): CanonicalRequest {
  const r = rng(seed);
  const messages: Message[] = [];
  let pending: string[] = [];
  for (let turns = r.int(1, 6), i = 0; i < turns; i++) {
    if (i % 2 === 0) {
      messages.push({ role: 'user', content: userBlocks(r, f, pending) });
      pending = [];
    } else {
      messages.push({ role: 'assistant', content: assistantBlocks(r, f, pending) });
    }
  }
  const system = f === 'openai' ? (r.maybe() ? [{ type: 'text' as const, text: r.text() }] : []) : Array.from({ length: r.int(0, 2) }, () => textBlock(r, f));
  const req: CanonicalRequest = { model: 'm', system, messages, stream: r.maybe() };
  if (f === 'openai' && req.stream) req.stream_include_usage = true;
  if (f === 'anthropic' || r.maybe()) req.max_tokens = r.int(2000, 9000);
  if (r.maybe()) req.temperature = r.int(0, f === 'openai' ? 20 : 10) / 10;
  if (r.maybe()) req.top_p = r.int(1, 10) / 10;
  if (f === 'anthropic' && r.maybe()) req.top_k = r.int(1, 100);
  if (r.maybe()) req.stop = [r.text(), 'END'].slice(0, r.int(1, 2));
  if (r.maybe()) req.user = `user-${r.int(0, 99)}`;
  if (r.maybe(0.6)) {
    req.tools = tools(r, f);
    const parallel = r.pick([undefined, true, false]);
    const choice = r.pick([undefined, 'auto', 'any', 'none', 'tool'] as const);
    let tc: ToolChoice | undefined = choice === 'tool' ? { type: 'tool', name: req.tools[0]!.name } : choice ? { type: choice } : undefined;
    if (parallel === false) tc = { ...(tc ?? { type: 'auto' }), disable_parallel_tool_use: true };
    if (f === 'anthropic' && parallel === true && tc) tc = { ...tc, disable_parallel_tool_use: false };
    if (tc) req.tool_choice = tc;
    if (parallel !== undefined && (f === 'openai' || tc)) req.parallel_tool_calls = parallel;
  }
  if (f === 'anthropic') {
    if (r.maybe(0.3)) req.thinking = r.maybe() ? { type: 'enabled', budget_tokens: r.int(1024, 1999) } : { type: 'disabled' };
    // Only requests Claude accepts: thinking never beside sampling it refuses, a forced tool choice
    // or a tool loop without signed thinking (the encoder would rightly drop it).
    const refusesThinking = req.temperature !== undefined || req.top_k !== undefined || (req.top_p !== undefined && req.top_p < 0.95)
      || claudeThinkingConflict(req.tool_choice, req.messages) !== null;
    if (req.thinking?.type === 'enabled' && refusesThinking) req.thinking = { type: 'disabled' };
    if (r.maybe(0.3)) req.response_format = { type: 'json_schema', name: 'response', schema: { type: 'object', properties: { a: { type: 'number' } } }, strict: true };
    if (r.maybe(0.3)) req.service_tier = r.pick(['auto', 'standard_only']);
    if (r.maybe(0.2)) req.container = r.pick(['container_1', { id: 'c1', skills: [] }]);
    if (r.maybe(0.2)) {
      req.context_management = { edits: [{ type: 'clear_tool_uses_20250919' }] };
      req.context_edits = [{ type: 'clear_tool_uses' }];
    }
  } else {
    if (r.maybe(0.3)) req.frequency_penalty = r.int(-20, 20) / 10;
    if (r.maybe(0.3)) req.presence_penalty = r.int(-20, 20) / 10;
    if (r.maybe(0.3)) req.seed = r.int(0, 1000);
    if (r.maybe(0.3)) req.logit_bias = { '42': r.int(-100, 100) };
    if (r.maybe(0.3)) req.reasoning_effort = r.pick(['minimal', 'low', 'medium', 'high']);
    if (r.maybe(0.3)) req.verbosity = r.pick(['low', 'medium', 'high']);
    if (r.maybe(0.3)) req.metadata = { k: r.text() };
    if (r.maybe(0.3)) req.service_tier = r.pick(['auto', 'flex', 'priority']);
    if (r.maybe(0.4)) {
      req.response_format = r.pick([{ type: 'text' }, { type: 'json_object' },
        { type: 'json_schema', name: 'out', schema: { type: 'object' }, strict: true, description: 'd' }] as const);
    }
  }
  return req;
}

const SEEDS = 400;
/** The catalog entry of a model that can honour everything generated: reasoning, structured output. */
const MODEL = { max_completion_tokens: 64000, context_window: 200000, capabilities: { tools: true, vision: true, reasoning: true, structured_output: true, prompt_caching: true } };
const cases: Array<[Fmt, Codec, (b: unknown) => Record<string, unknown>]> = [
  ['openai', openaiChatCodec, validateChatRequest],
  ['anthropic', anthropicMessagesCodec, validateMessagesRequest],
];

for (const [fmt, codec, validate] of cases) {
  test(`${fmt}: ${SEEDS} random canonical requests survive encode -> validate -> decode`, () => {
    for (let seed = 1; seed <= SEEDS; seed++) {
      const req = generate(seed, fmt);
      const target: TargetInfo = { upstreamModel: req.model, provider: 'test', model: MODEL };
      const wire = codec.upstream.encodeRequest(structuredClone(req), target);
      const back = codec.client!.decodeRequest(validate(JSON.parse(JSON.stringify(wire.body))));
      assert.deepEqual(back, req, `seed ${seed}`);
      assert.deepEqual(wire.adjustments ?? [], [], `seed ${seed}: nothing the client asked for was changed`);
    }
  });
}

/** Events a model could stream: text, thinking, tools, usage; in the order every upstream sends them. */
function generateStream(seed: number, thinking: boolean): StreamEvent[] {
  const r = rng(seed);
  const ev: StreamEvent[] = [{ type: 'message_start', id: `msg_${seed}`, model: 'm', usage: { input_tokens: r.int(1, 500), output_tokens: 1 } }];
  let index = 0;
  if (thinking) {
    ev.push({ type: 'block_start', index, block: { type: 'thinking', thinking: '', signature: '' } });
    for (let i = r.int(1, 3); i > 0; i--) ev.push({ type: 'block_delta', index, delta: { type: 'thinking_delta', thinking: r.text() } });
    ev.push({ type: 'block_delta', index, delta: { type: 'signature_delta', signature: `s${seed}` } }, { type: 'block_stop', index: index++ });
  }
  ev.push({ type: 'block_start', index, block: { type: 'text', text: '' } });
  for (let i = r.int(1, 4); i > 0; i--) ev.push({ type: 'block_delta', index, delta: { type: 'text_delta', text: r.text() } });
  ev.push({ type: 'block_stop', index: index++ });
  const nTools = r.int(0, 2);
  for (let t = 0; t < nTools; t++) {
    ev.push({ type: 'block_start', index, block: { type: 'tool_use', id: `call_${seed}_${t}`, name: 'calc', input: {} } });
    const json = JSON.stringify({ q: r.text(), n: r.int(0, 9) });
    const cut = r.int(1, json.length - 1);
    ev.push({ type: 'block_delta', index, delta: { type: 'input_json_delta', partial_json: json.slice(0, cut) } });
    ev.push({ type: 'block_delta', index, delta: { type: 'input_json_delta', partial_json: json.slice(cut) } });
    ev.push({ type: 'block_stop', index: index++ });
  }
  ev.push({ type: 'message_delta', stop_reason: nTools > 0 ? 'tool_use' : 'end_turn', stop_sequence: null, usage: { output_tokens: r.int(1, 900) } });
  ev.push({ type: 'message_stop' });
  return ev;
}

/** The events with each run of one tool block's consecutive argument pieces joined into one. */
function joinedArguments(events: StreamEvent[]): StreamEvent[] {
  return events.reduce<StreamEvent[]>((acc, x) => {
    const prev = acc.at(-1);
    if (x.type === 'block_delta' && x.delta.type === 'input_json_delta' && prev?.type === 'block_delta' && prev.index === x.index && prev.delta.type === 'input_json_delta') {
      acc[acc.length - 1] = { ...prev, delta: { type: 'input_json_delta', partial_json: prev.delta.partial_json + x.delta.partial_json } };
    } else acc.push(x);
    return acc;
  }, []);
}

test('anthropic: encoded streams decode back to the same events when cut at every byte', () => {
  const enc = new TextEncoder();
  for (let seed = 1; seed <= 12; seed++) {
    const events = generateStream(seed, seed % 2 === 0);
    const e = anthropicMessagesCodec.client!.newStreamEncoder({ includeUsage: true });
    const bytes = enc.encode(events.map((x) => e.encode(x)).join('') + e.end());
    // A tool call's input goes out whole at its block's end (src/formats/anthropic-messages/stream-encoder.ts): its pieces come back joined.
    const expected = joinedArguments(events.map((x) => (x.type === 'message_start' ? { ...x, usage: { input_tokens: x.usage.input_tokens, output_tokens: 1, cache_read_input_tokens: 0, cache_creation_input_tokens: 0, cache_creation_5m: 0, cache_creation_1h: 0 } } : x)));
    for (let cut = 0; cut <= bytes.length; cut += 1 + (cut % 7)) {
      const d = anthropicMessagesCodec.upstream.newStreamDecoder();
      assert.deepEqual([...d.push(bytes.subarray(0, cut)), ...d.push(bytes.subarray(cut)), ...d.end()], expected, `seed ${seed} cut ${cut}`);
    }
  }
});

test('openai: streams re-encoded from canonical events keep text, tool arguments and stop reason', () => {
  const enc = new TextEncoder();
  for (let seed = 1; seed <= 12; seed++) {
    const events = generateStream(seed, false);
    const e = openaiChatCodec.client!.newStreamEncoder({ includeUsage: true });
    const bytes = enc.encode(events.map((x) => e.encode(x)).join('') + e.end());
    const d = openaiChatCodec.upstream.newStreamDecoder();
    const back = [...d.push(bytes), ...d.end()];
    // OpenAI has no input usage at the start, and the decoder keeps tool blocks open until the
    // finish (calls may interleave), so stops move; every block must still be stopped exactly once.
    // Later parallel calls are collected and sent whole (blocks never overlap), so argument
    // pieces of one block are compared joined.
    const strip = (xs: StreamEvent[]) => joinedArguments(xs.filter((x) => !['message_start', 'message_delta', 'block_stop'].includes(x.type)));
    assert.deepEqual(strip(back), strip(events), `seed ${seed}`);
    const stops = back.filter((x) => x.type === 'block_stop').map((x) => (x as { index: number }).index).sort();
    assert.deepEqual(stops, events.filter((x) => x.type === 'block_start').map((x) => (x as { index: number }).index), `seed ${seed} stops`);
    const md = back.find((x) => x.type === 'message_delta');
    const orig = events.find((x) => x.type === 'message_delta');
    assert.ok(md && orig && md.type === 'message_delta' && orig.type === 'message_delta');
    assert.equal(md.stop_reason, orig.stop_reason);
    assert.equal(md.usage.output_tokens, orig.usage.output_tokens);
    assert.equal(md.usage.input_tokens, (events[0] as { usage: { input_tokens: number } }).usage.input_tokens);
  }
});
