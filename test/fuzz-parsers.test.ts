// Property-based fuzzing (fast-check) of the pure parsers, validators and codecs, fast enough for many
// thousands of runs: the SSE parser (any byte split gives the same frames as the whole), the Bedrock
// event-stream decoder (valid frames survive any split; garbage only ever throws EventStreamError), every
// upstream stream decoder (never throws, always ends in message_stop or an error; a frame that is not a
// JSON object fails the stream there), every same-format relay (forwards only frames that parse; a bad
// frame is never a success) and the relays' JSON object check (agrees with JSON.parse), the feedback
// flattener (never throws; ok events respect the limits), and each client format's validator, request
// decoder and every wire's request encoder (only GatewayError 4xx, never another exception).
// Fixed seed; RELIABILITY=long runs 20x more.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createSseParser, SseLimitError, type SseFrame } from '../src/formats/sse.ts';
import { createEventStreamDecoder, EventStreamError } from '../src/formats/bedrock/eventstream.ts';
import { codecFor, clientCodecFor } from '../src/formats/registry.ts';
import type { ClientFormat, PassthroughCodec, TargetModel, WireFormat } from '../src/formats/codec.ts';
import { isJsonObject } from '../src/formats/stream-frames.ts';
import { openaiChatPassthrough } from '../src/formats/passthrough/openai-chat.ts';
import { anthropicMessagesPassthrough } from '../src/formats/passthrough/anthropic-messages.ts';
import { openaiResponsesPassthrough } from '../src/formats/openai-responses/passthrough.ts';
import type { StreamEvent } from '../src/formats/canonical.ts';
import { flattenBatch, flattenBatchBytes } from '../src/feedback/batch.ts';
import { DEFAULT_FEEDBACK_LIMITS } from '../src/feedback/limits.ts';
import { encodeForTarget, VALIDATORS, type TargetSpec } from '../src/workers/convert-core.ts';
import { compileMapping } from '../src/mapping/compile.ts';
import { FORMAT_TOOL_IDS } from '../src/formats/tool-ids.ts';
import { GatewayError } from '../src/gateway-error.ts';
import { encodeFrame } from './mocks/eventstream.ts';
import { anyJson, chatBody, feedbackBody, messagesBody, rawBody, responsesBody } from './helpers/fuzz-bodies.ts';
import { reportFigures } from './helpers/figures.ts';

const LONG = process.env.RELIABILITY === 'long';
const SEED = Number(process.env.FUZZ_SEED ?? 20261113);
const RUNS = Number(process.env.FUZZ_RUNS ?? (LONG ? 40_000 : 2000));
const opts = { seed: SEED, numRuns: RUNS };
const figures: Record<string, number> = {};
const count = (name: string): void => { figures[name] = (figures[name] ?? 0) + 1; };

test.after(() => reportFigures(LONG ? 'fuzz-parsers-long' : 'fuzz-parsers', { seed: SEED, runsPerProperty: RUNS, ...figures }));

/** Cuts bytes at the given points (sorted, deduplicated, inside the buffer). */
function split(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Uint8Array[] = []; let at = 0;
  for (const p of points) { out.push(bytes.subarray(at, p)); at = p; }
  out.push(bytes.subarray(at));
  return out;
}

const enc = new TextEncoder();
/** SSE-ish text: real fields, comments, all three line endings, multi-byte characters, junk. */
const sseLine = fc.oneof(
  fc.string({ maxLength: 20 }).map((s) => `data: ${s}`), fc.string({ maxLength: 10 }).map((s) => `event: ${s}`),
  fc.constantFrom('', ': ping', 'data', 'data:', 'id: 7', 'retry: 10', 'data: {"a":"é😀"}', 'data: [DONE]', 'event: error', 'id: a\u0000b', 'field-without-colon'),
  fc.string({ maxLength: 10 }),
);
const sseText = fc.tuple(fc.array(fc.tuple(sseLine, fc.constantFrom('\n', '\r\n', '\r')), { maxLength: 12 })).map(([lines]) => lines.map(([l, e]) => l + e).join(''));

test(`SSE parser: any split of the bytes gives the frames of the whole (${RUNS} runs)`, () => {
  fc.assert(fc.property(sseText, fc.array(fc.nat(), { maxLength: 6 }), (text, cuts) => {
    const bytes = enc.encode(text);
    const whole = createSseParser();
    const expected: SseFrame[] = [...whole.push(bytes), ...whole.end()];
    const parts = createSseParser();
    const got: SseFrame[] = [];
    for (const c of split(bytes, cuts)) got.push(...parts.push(c));
    got.push(...parts.end());
    assert.deepEqual(got, expected);
    count('sse frames');
  }), opts);
});

test(`SSE parser: arbitrary bytes and an event past the limit only ever throw SseLimitError (${RUNS} runs)`, () => {
  fc.assert(fc.property(fc.array(fc.uint8Array({ maxLength: 200 }), { maxLength: 6 }), fc.integer({ min: 8, max: 64 }), (chunks, limit) => {
    const p = createSseParser({ maxEventChars: limit });
    try {
      for (const c of chunks) for (const f of p.push(c)) assert.ok(f.data.length <= limit + 1, 'an event never passes the limit');
      p.end();
    } catch (e) {
      assert.ok(e instanceof SseLimitError, `only the limit error: ${String(e)}`);
      count('sse limit errors');
    }
  }), opts);
});

const frameArb = fc.record({
  headers: fc.dictionary(fc.constantFrom(':event-type', ':message-type', ':content-type', ':exception-type', 'x'), fc.string({ maxLength: 20 }), { minKeys: 1, maxKeys: 4 }),
  payload: fc.oneof(fc.uint8Array({ maxLength: 80 }).map((b) => Buffer.from(b)), anyJson.map((j) => Buffer.from(JSON.stringify(j) ?? 'null'))),
});

test(`Bedrock event stream: valid frames survive any split; damaged ones only throw EventStreamError (${RUNS} runs)`, () => {
  fc.assert(fc.property(fc.array(frameArb, { minLength: 1, maxLength: 5 }), fc.array(fc.nat(), { maxLength: 8 }), fc.option(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 }))), (frames, cuts, damage) => {
    const bytes = Buffer.concat(frames.map((f) => encodeFrame(f.headers, f.payload)));
    if (damage) bytes[damage[0] % bytes.length] ^= damage[1];
    const d = createEventStreamDecoder();
    const got: Array<{ headers: Record<string, string>; payload: Buffer }> = [];
    try {
      for (const c of split(bytes, cuts)) for (const m of d.push(c)) got.push({ headers: m.headers, payload: Buffer.from(m.payload) });
    } catch (e) {
      assert.ok(e instanceof EventStreamError, `only EventStreamError: ${String(e)}`);
      assert.ok(damage, 'an intact stream never fails');
      count('event-stream errors');
    }
    // Whatever came out is a prefix of what went in (a CRC never lets a damaged frame through).
    for (const [i, m] of got.entries()) assert.deepEqual({ headers: { ...m.headers }, payload: m.payload }, { headers: { ...frames[i]!.headers }, payload: frames[i]!.payload });
    if (!damage) assert.equal(got.length, frames.length);
  }), opts);
});

test(`Bedrock event stream: arbitrary bytes only ever throw EventStreamError (${RUNS} runs)`, () => {
  fc.assert(fc.property(fc.array(fc.uint8Array({ maxLength: 64 }), { maxLength: 5 }), (chunks) => {
    const d = createEventStreamDecoder();
    try { for (const c of chunks) d.push(c); } catch (e) { assert.ok(e instanceof EventStreamError, String(e)); }
  }), opts);
});

/** Frames of each wire's stream dialect built from arbitrary JSON, with event names and junk mixed in. */
const wireEvent = fc.oneof(
  { weight: 3, arbitrary: fc.record({ event: fc.option(fc.constantFrom('message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop', 'error', 'ping', 'response.completed')), data: anyJson.map((j) => JSON.stringify(j) ?? 'null') }) },
  { weight: 3, arbitrary: fc.record({ event: fc.constant(null), data: fc.constantFrom(
    '{"type":"message_start","message":{"id":"m","usage":{"input_tokens":5}}}', '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
    '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}', '{"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":"{"}}',
    '{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":-1}}', '{"type":"message_stop"}',
    '{"choices":[{"index":0,"delta":{"content":"x","tool_calls":[{"index":5,"function":{"arguments":"{"}}]}}]}', '{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":1e400}}',
    '{"candidates":[{"content":{"parts":[{"text":"g"},{"functionCall":{"name":"f","args":null}}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":"x"}}',
    '{"error":{"code":503,"message":"busy"}}', '[DONE]', '{"choices":null}', '{"candidates":[{}]}') }) },
);

function sseOf(events: Array<{ event: string | null; data: string }>): Uint8Array {
  return enc.encode(events.map((e) => `${e.event ? `event: ${e.event}\n` : ''}data: ${e.data}\n\n`).join(''));
}

/** Bedrock frames from arbitrary event types and payloads. */
const bedrockFrames = fc.array(fc.record({
  type: fc.constantFrom('messageStart', 'contentBlockStart', 'contentBlockDelta', 'contentBlockStop', 'messageStop', 'metadata', 'exception', 'unknown'),
  payload: fc.oneof(anyJson, fc.constantFrom({ contentBlockIndex: 0, delta: { text: 'b' } }, { contentBlockIndex: 1, start: { toolUse: { toolUseId: 't', name: 'f' } } }, { stopReason: 'end_turn' }, { usage: { inputTokens: 3, outputTokens: 'x' } })),
}), { maxLength: 10 }).map((list) => Buffer.concat(list.map((f) => encodeFrame(f.type === 'exception'
  ? { ':message-type': 'exception', ':exception-type': 'throttlingException', ':content-type': 'application/json' }
  : { ':event-type': f.type, ':message-type': 'event', ':content-type': 'application/json' }, JSON.stringify(f.payload) ?? 'null'))));

const WIRES: WireFormat[] = ['openai-chat', 'anthropic-messages', 'gemini', 'bedrock-converse'];

for (const wire of WIRES) {
  test(`${wire} stream decoder: never throws, and every stream ends in message_stop or an error (${RUNS} runs)`, () => {
    const source = wire === 'bedrock-converse' ? bedrockFrames.map((b) => new Uint8Array(b)) : fc.array(wireEvent, { maxLength: 10 }).map(sseOf);
    fc.assert(fc.property(source, fc.array(fc.nat(), { maxLength: 6 }), (bytes, cuts) => {
      const d = codecFor(wire).upstream.newStreamDecoder();
      const events: StreamEvent[] = [];
      for (const c of split(bytes, cuts)) events.push(...d.push(c));
      events.push(...d.end());
      const last = events.at(-1);
      assert.ok(last && (last.type === 'message_stop' || last.type === 'error'), `ends terminated: ${JSON.stringify(events.slice(-2))}`);
      // Nothing after the end.
      const end = events.findIndex((e) => e.type === 'message_stop' || e.type === 'error');
      assert.equal(end, events.length - 1, 'no event after the end of the stream');
      count(`${wire} ${last.type}`);
    }), opts);
  });
}

// ---- Frames no stream may carry: cut short, not JSON, or JSON that is not an object -----------------------

const isObjectText = (s: string): boolean => { try { const v: unknown = JSON.parse(s); return typeof v === 'object' && v !== null && !Array.isArray(v); } catch { return false; } };
/** Data that is not one JSON object (and not blank, which carries nothing): scalars, arrays, objects cut short, damaged ones. */
const badData = fc.oneof(
  anyJson.filter((j) => typeof j !== 'object' || j === null || Array.isArray(j)).map((j) => JSON.stringify(j) ?? 'null'),
  fc.tuple(wireEvent.map((e) => e.data).filter(isObjectText), fc.nat()).map(([d, n]) => d.slice(0, 1 + (n % (d.length - 1)))),
  fc.tuple(wireEvent.map((e) => e.data).filter(isObjectText), fc.nat(), fc.constantFrom('x', '"', '}', ',', '\\', '\u0001')).map(([d, n, c]) => {
    const at = 1 + (n % (d.length - 1));
    return d.slice(0, at) + c + d.slice(at);
  }).filter((d) => !isObjectText(d)),
);
const DECODED_WIRES: WireFormat[] = ['openai-chat', 'anthropic-messages', 'gemini'];

for (const wire of DECODED_WIRES) {
  test(`${wire} stream decoder: a frame that is not a JSON object ends the stream in an error there, keeping what came before (${RUNS} runs)`, () => {
    fc.assert(fc.property(fc.array(wireEvent, { maxLength: 8 }), badData, fc.nat(), fc.array(fc.nat(), { maxLength: 6 }), (events, bad, at, cuts) => {
      const k = at % (events.length + 1);
      const head = codecFor(wire).upstream.newStreamDecoder().push(sseOf(events.slice(0, k)));
      const ended = head.some((e) => e.type === 'message_stop' || e.type === 'error');
      const d = codecFor(wire).upstream.newStreamDecoder();
      const out: StreamEvent[] = [];
      for (const c of split(sseOf([...events.slice(0, k), { event: 'content_block_delta', data: bad }, ...events.slice(k)]), cuts)) out.push(...d.push(c));
      out.push(...d.end());
      // (Ids a decoder makes up itself, UUIDv7 and what derives from them, differ between two runs.)
      const sameIds = (list: StreamEvent[]) => JSON.stringify(list).replace(/[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}/g, 'uuid');
      assert.deepEqual(sameIds(out.slice(0, head.length)), sameIds(head), 'nothing decoded before the bad frame is lost');
      if (ended) { count(`${wire} bad frame after the end`); return; }
      assert.equal(out.at(-1)?.type, 'error', `the stream fails: ${JSON.stringify(bad)} -> ${JSON.stringify(out.slice(-2))}`);
      assert.ok(!out.some((e) => e.type === 'message_stop'), 'never a normal end');
      count(`${wire} bad frame failed the stream`);
    }), opts);
  });
}

test(`bedrock-converse stream decoder: an event whose payload is not a JSON object ends the stream in an error (${RUNS} runs)`, () => {
  fc.assert(fc.property(bedrockFrames, badData, (frames, bad) => {
    const head = codecFor('bedrock-converse').upstream.newStreamDecoder().push(new Uint8Array(frames));
    const d = codecFor('bedrock-converse').upstream.newStreamDecoder();
    const out = [...d.push(new Uint8Array(Buffer.concat([frames, encodeFrame({ ':event-type': 'contentBlockDelta', ':message-type': 'event', ':content-type': 'application/json' }, bad)]))), ...d.end()];
    if (head.some((e) => e.type === 'message_stop' || e.type === 'error')) return;
    assert.equal(out.at(-1)?.type, 'error');
    assert.ok(!out.some((e) => e.type === 'message_stop'));
  }), opts);
});

test(`JSON object check of the relays: true exactly when JSON.parse reads an object (${RUNS} runs)`, () => {
  fc.assert(fc.property(fc.oneof(wireEvent.map((e) => e.data), badData, anyJson.map((j) => JSON.stringify(j, null, 1) ?? '')), (s) => {
    assert.equal(isJsonObject(s), isObjectText(s), JSON.stringify(s));
  }), opts);
});

/** Every same-format relay, fed frame by frame: the relay's own format and how it is reached. */
const RELAYS: Array<[string, PassthroughCodec]> = [
  ['openai-chat', openaiChatPassthrough], ['anthropic-messages', anthropicMessagesPassthrough], ['openai-responses', openaiResponsesPassthrough],
];
const relayEvent = fc.oneof({ weight: 4, arbitrary: wireEvent }, { weight: 1, arbitrary: badData.map((data) => ({ event: 'content_block_delta', data })) });

const RESPONSE_ENDS = new Set(['response.completed', 'response.incomplete', 'response.failed']);
/** Whether a frame the relay read is its stream's end: nothing after it belongs to the answer (neither relayed nor read). */
function endsStream(name: string, f: SseFrame): boolean {
  if (name === 'openai-chat') return f.data === '[DONE]';
  if (!isObjectText(f.data)) return false;
  const ev = JSON.parse(f.data) as Record<string, unknown>;
  const type = typeof ev.type === 'string' ? ev.type : f.event;
  if (name === 'anthropic-messages') return type === 'message_stop';
  return RESPONSE_ENDS.has(type ?? '') && typeof ev.response === 'object' && ev.response !== null && !Array.isArray(ev.response);
}

for (const [name, codec] of RELAYS) {
  test(`${name} pass-through relay: every frame it forwards parses; a bad frame fails the stream, never a success (${RUNS} runs)`, () => {
    fc.assert(fc.property(fc.array(relayEvent, { maxLength: 10 }), fc.boolean(), (events, includeUsage) => {
      const s = codec.newStream({ id: 'id-1', model: 'p/m', includeUsage, request: { stream: true } });
      let out = '';
      let failed = false;
      let done = false;
      for (const e of events) {
        const stopped = s.progress.ended || (s.progress.error !== null && !s.progress.content) || done;
        const frame: SseFrame = e.event ? { event: e.event, data: e.data } : { data: e.data };
        const got = s.frame(frame);
        out += got;
        if (stopped) { assert.equal(got, '', 'nothing is relayed once the stream failed or ended'); continue; }
        done = endsStream(name, frame);
        if (isObjectText(e.data) || e.data === '[DONE]') continue;
        failed = true;
        assert.ok(s.progress.error !== null && !s.progress.complete, 'a bad frame is an error');
        assert.equal(s.progress.ended, s.progress.content, 'after content the relay ended the stream itself');
      }
      out += s.end();
      if (failed) assert.equal(s.progress.complete, false, 'never recorded as a success');
      const frames = createSseParser().push(enc.encode(out));
      for (const f of frames) assert.ok(f.data === '[DONE]' || isObjectText(f.data), `forwarded: ${f.data}`);
      count(`${name} relay ${failed ? 'failed' : 'clean'}`);
    }), opts);
  });
}

test(`feedback flattener: any body is flattened or refused, never thrown; ok events respect the limits (${RUNS} runs)`, () => {
  const limits = DEFAULT_FEEDBACK_LIMITS;
  fc.assert(fc.property(fc.oneof(feedbackBody, anyJson), (body) => {
    const r = flattenBatch(body, limits);
    const again = flattenBatchBytes(enc.encode(JSON.stringify(body) ?? 'null'), limits);
    assert.deepEqual(again, r, 'the bytes path (workers) and the parsed path agree');
    if (r.kind !== 'ok') { count(`feedback ${r.kind}`); return; }
    for (const ev of r.events) {
      if (!ev.ok) { assert.equal(typeof ev.message, 'string'); count('feedback refused events'); continue; }
      count('feedback ok events');
      assert.ok(ev.entries.length <= limits.maxEntriesPerEvent);
      for (const e of ev.entries) {
        assert.ok(e.metric.length > 0 && e.metric.length <= limits.maxKeyLength, e.metric);
        assert.doesNotMatch(e.metric, /[\u0000-\u001f\u007f]/);
        assert.ok(['boolean', 'float', 'comment'].includes(e.type));
        if (e.type === 'float') assert.ok(Number.isFinite(Number(e.value)), `a float metric holds a finite number: ${e.value}`);
      }
    }
  }), opts);
});

test(`feedback flattener: raw bytes are refused as invalid JSON or flattened, never thrown (${RUNS} runs)`, () => {
  fc.assert(fc.property(fc.oneof(rawBody.map((s) => enc.encode(s)), fc.uint8Array({ maxLength: 80 })), (bytes) => {
    const r = flattenBatchBytes(bytes, DEFAULT_FEEDBACK_LIMITS);
    assert.ok(['ok', 'invalid_json', 'not_array', 'too_many'].includes(r.kind));
  }), opts);
});

const NO_MAPPING = compileMapping([]);
const targetSpec = (format: WireFormat): TargetSpec => ({
  id: `p/m`, provider: 'p', format, upstream: 'm', modelInBody: true, chatPath: null, native: {}, model: TARGET, mappingRows: [], toolIds: FORMAT_TOOL_IDS[format],
});
const TARGET: TargetModel = { max_completion_tokens: 4096, context_window: 200_000, capabilities: { tools: true, vision: true, reasoning: true, structured_output: true, prompt_caching: true } } as TargetModel;

/** Only a 4xx GatewayError may come out of validation, decoding and encoding. */
function only4xx(e: unknown, what: string): void {
  assert.ok(e instanceof GatewayError, `${what} threw ${e instanceof Error ? e.stack : String(e)}`);
  assert.ok(e.status >= 400 && e.status < 500, `${what}: status ${e.status} (${e.message})`);
}

const CLIENT_BODIES: Array<[ClientFormat, fc.Arbitrary<unknown>]> = [['openai-chat', chatBody], ['anthropic-messages', messagesBody], ['openai-responses', responsesBody]];
/** Counterexamples the long runs found, always tried first. */
const REGRESSIONS: Partial<Record<ClientFormat, unknown[]>> = {
  // A reasoning item whose summary holds null: the decoder read null.text (a TypeError, a 500); now a 400.
  'openai-responses': [{ model: 'oai/test-model', input: [{ type: 'reasoning', summary: [null] }] }, { model: 'm', input: [{ type: 'reasoning', content: [7] }] }],
};

for (const [client, body] of CLIENT_BODIES) {
  test(`${client}: validate, decode and encode for every wire refuse only with a 4xx GatewayError (${RUNS} runs)`, () => {
    fc.assert(fc.property(fc.oneof({ weight: 6, arbitrary: body }, { weight: 1, arbitrary: anyJson }), (raw) => {
      let valid: Record<string, unknown>;
      try { valid = VALIDATORS[client]!(raw); } catch (e) { only4xx(e, 'validate'); count(`${client} refused by validation`); return; }
      let canonical;
      try { canonical = clientCodecFor(client).decodeRequest(valid); } catch (e) { only4xx(e, 'decode'); count(`${client} refused by decoding`); return; }
      count(`${client} decoded`);
      for (const wire of WIRES) {
        try {
          const out = codecFor(wire).upstream.encodeRequest({ ...canonical, model: 'm' }, { upstreamModel: 'm', provider: 'p', model: TARGET });
          assert.equal(typeof out.path, 'string');
          assert.doesNotThrow(() => JSON.stringify(out.body));
        } catch (e) { only4xx(e, `encode for ${wire}`); count(`${client} refused by the ${wire} encoder`); }
        // The attempt path as the engine runs it: ids, tool changes, names and tool search fitted for the target, then encoded.
        try {
          const out = encodeForTarget(client, valid, { value: canonical }, targetSpec(wire), NO_MAPPING);
          assert.doesNotThrow(() => JSON.stringify(out.body));
        } catch (e) { only4xx(e, `encodeForTarget ${wire}`); }
      }
    }), { ...opts, examples: (REGRESSIONS[client] ?? []).map((b) => [b] as [unknown]) });
  });
}
