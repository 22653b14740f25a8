// Bedrock Converse codec: golden {in, out} fixtures per direction (streams replayed as real
// event-stream frames, cut at every byte boundary), stop reasons, errors and refused parameters.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { bedrockCodec } from '../src/formats/bedrock/index.ts';
import { bedrockStopReason, bedrockUsage, decodeBedrockError } from '../src/formats/bedrock/decode.ts';
import { encodeEventMessage } from '../src/formats/bedrock/eventstream.ts';
import type { CanonicalRequest, CanonicalResponse, StreamEvent, Usage } from '../src/formats/canonical.ts';
import { costOf } from '../src/catalog/cost.ts';
import type { Pricing } from '../src/catalog/types.ts';
import type { StreamDecoder } from '../src/formats/codec.ts';
import { GatewayError } from '../src/gateway-error.ts';
import { isUuid } from '../src/util/uuid.ts';
import { markResponse, signerOf } from '../src/formats/signatures.ts';

const codec = bedrockCodec.upstream;
const dir = new URL('./fixtures/formats/bedrock/', import.meta.url);
type Fixture = { about: string; model?: string; in: unknown; out: unknown };
const fixtures = readdirSync(dir).filter((f) => f.endsWith('.json')).sort()
  .map((f) => ({ name: f, fx: JSON.parse(readFileSync(new URL(f, dir), 'utf8')) as Fixture }));
/** A catalog entry of a reasoning model with structured output, as the gateway passes it. */
const MODEL = { max_completion_tokens: 64000, context_window: 200000, capabilities: { tools: true, vision: true, reasoning: true, structured_output: true, prompt_caching: true } };
const target = (model: string) => ({ upstreamModel: model, provider: 'bedrock', model: MODEL });

/** Bedrock sends no message id; the decoder mints a UUIDv7, which fixtures write as `<uuid>`. */
function normalise(events: StreamEvent[]): StreamEvent[] {
  return events.map((e) => {
    if (e.type !== 'message_start') return e;
    assert.ok(isUuid(e.id), `message_start id ${e.id} is a UUID`);
    return { ...e, id: '<uuid>' };
  });
}
const drain = (d: StreamDecoder, chunks: Uint8Array[]): StreamEvent[] => normalise([...chunks.flatMap((c) => d.push(c)), ...d.end()]);

function frames(list: Array<{ headers: Record<string, string>; payload: unknown }>): Uint8Array {
  return Buffer.concat(list.map((f) => encodeEventMessage(f.headers, new TextEncoder().encode(JSON.stringify(f.payload)))));
}

for (const { name, fx } of fixtures) {
  test(`bedrock fixture ${name}: ${fx.about}`, () => {
    if (name.startsWith('encode-')) {
      const req = fx.in as CanonicalRequest;
      assert.deepEqual(codec.encodeRequest(req, target(fx.model ?? req.model)), fx.out);
    } else if (name.startsWith('decode-')) {
      const { id, ...rest } = codec.decodeResponse(fx.in) as CanonicalResponse;
      assert.ok(isUuid(id));
      assert.deepEqual(rest, fx.out);
    } else if (name.startsWith('stream-')) {
      const bytes = frames(fx.in as Array<{ headers: Record<string, string>; payload: unknown }>);
      assert.deepEqual(drain(codec.newStreamDecoder(), [bytes]), fx.out);
      for (let cut = 1; cut < bytes.length; cut++) {
        assert.deepEqual(drain(codec.newStreamDecoder(), [bytes.subarray(0, cut), bytes.subarray(cut)]), fx.out, `cut at ${cut}`);
      }
      assert.deepEqual(drain(codec.newStreamDecoder(), [...bytes].map((b) => Uint8Array.of(b))), fx.out);
    } else {
      assert.fail(`fixture ${name} has no known direction prefix`);
    }
  });
}

test('every Converse stop reason maps to a canonical stop reason', () => {
  const table: Array<[unknown, string | null]> = [
    ['end_turn', 'end_turn'], ['tool_use', 'tool_use'], ['max_tokens', 'max_tokens'], ['stop_sequence', 'stop_sequence'],
    ['guardrail_intervened', 'refusal'], ['content_filtered', 'refusal'], ['model_context_window_exceeded', 'max_tokens'],
    [undefined, null],
  ];
  for (const [reason, want] of table) assert.equal(bedrockStopReason(reason), want, String(reason));
});

test('1-hour cache writes from cacheDetails bill at the 1-hour price, from Converse and ConverseStream alike', () => {
  // Claude-Sonnet-like sheet: writes $3.75/M for 5 minutes, $6/M for an hour.
  const P: Pricing = {
    prompt: '0.000003', completion: '0.000015', internal_reasoning: '0', input_cache_read: '0.0000003',
    input_cache_write: '0.00000375', input_cache_write_1h: '0.000006', image: '0', request: '0', web_search: '0',
  };
  const fx = (n: string): Fixture => fixtures.find((f) => f.name === n)!.fx;
  const body = codec.decodeResponse(fx('decode-cache-ttl.json').in).usage;
  const bytes = frames(fx('stream-cache-ttl.json').in as Array<{ headers: Record<string, string>; payload: unknown }>);
  const delta = drain(codec.newStreamDecoder(), [bytes]).find((e) => e.type === 'message_delta');
  assert.ok(delta?.type === 'message_delta');
  for (const usage of [body, delta.usage as Usage]) {
    assert.equal(usage.cache_creation_input_tokens, 3000);
    assert.equal(usage.cache_creation_1h, 2000);
    assert.equal(usage.cache_creation_5m, 1000);
    // 12 x 3e-6 + 3 x 15e-6 + 500 x 0.3e-6 + 1000 x 3.75e-6 + 2000 x 6e-6 (all 3000 at 3.75e-6 would be 0.011481).
    assert.equal(costOf(P, usage), '0.015981');
  }
});

test('cacheDetails: malformed entries and unknown ttls are skipped, uncovered writes stay 5-minute, the total caps the split', () => {
  const split = (u: Record<string, unknown>): [number, number, number] => {
    const x = bedrockUsage(u);
    return [x.cache_creation_input_tokens, x.cache_creation_5m, x.cache_creation_1h];
  };
  assert.deepEqual(split({ cacheWriteInputTokens: 100 }), [100, 100, 0], 'no cacheDetails: all 5-minute, as before');
  assert.deepEqual(split({ cacheWriteInputTokens: 100, cacheDetails: [] }), [100, 100, 0]);
  assert.deepEqual(split({ cacheWriteInputTokens: 100, cacheDetails: 'x' }), [100, 100, 0]);
  assert.deepEqual(split({ cacheWriteInputTokens: 100, cacheDetails: [{ ttl: '1h', inputTokens: 60 }] }), [100, 40, 60], 'the uncovered 40 are 5-minute');
  assert.deepEqual(split({
    cacheWriteInputTokens: 100,
    cacheDetails: [null, 7, { ttl: '1h' }, { ttl: '1h', inputTokens: -5 }, { ttl: '1h', inputTokens: 1.5 }, { ttl: '1h', inputTokens: '9' }, { ttl: '24h', inputTokens: 30 }, { ttl: '1h', inputTokens: 10 }, { ttl: '1h', inputTokens: 20 }],
  }), [100, 70, 30], 'only the two well-formed 1h entries count, summed');
  assert.deepEqual(split({ cacheDetails: [{ ttl: '1h', inputTokens: 20 }, { ttl: '5m', inputTokens: 5 }] }), [25, 5, 20], 'no total: the details sum');
  assert.deepEqual(split({ cacheWriteInputTokens: 50, cacheDetails: [{ ttl: '1h', inputTokens: 80 }, { ttl: '5m', inputTokens: 10 }] }), [50, 0, 50], 'never more than the total');
});

test('a decoded Converse message replays to the same content blocks (tool ids, reasoning signatures)', () => {
  const content = [
    { reasoningContent: { reasoningText: { text: 'plan', signature: 'SIG' } } },
    { reasoningContent: { redactedContent: 'b3BhcXVl' } },
    { text: 'Calling.' },
    { toolUse: { toolUseId: 'tooluse_Q1', name: 'f', input: { a: [1, 2] } } },
  ];
  const res = codec.decodeResponse({ output: { message: { role: 'assistant', content } }, stopReason: 'tool_use', usage: {} });
  markResponse(res, signerOf('bedrock-converse', 'm'), 'openai-responses'); // as a client of another format gives it back
  const req: CanonicalRequest = {
    model: 'm', system: [], stream: false, tools: [{ name: 'f', input_schema: { type: 'object' } }],
    messages: [{ role: 'user', content: [{ type: 'text', text: 'go' }] }, { role: 'assistant', content: res.content }],
  };
  const body = codec.encodeRequest(req, target('m')).body as { messages: unknown[] };
  assert.deepEqual(body.messages[1], { role: 'assistant', content });
});

test('a corrupt event stream ends in an error event', () => {
  const good = encodeEventMessage({ ':event-type': 'messageStart', ':message-type': 'event' }, new TextEncoder().encode('{"role":"assistant"}'));
  const bad = Uint8Array.from(good);
  bad[bad.length - 6]! ^= 0x01;
  const d = codec.newStreamDecoder();
  const events = d.push(bad);
  assert.equal(events.length, 1);
  assert.deepEqual(events[0], { type: 'error', error: { type: 'api_error', message: 'corrupt Bedrock event stream: event-stream message CRC mismatch' } });
  assert.deepEqual(d.push(good), []);
  assert.deepEqual(d.end(), []);
});

test('content Converse cannot carry is refused with 400; parameters it lacks are dropped and reported', () => {
  const base: CanonicalRequest = { model: 'm', system: [], stream: false, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] };
  const refused: Array<[string, Partial<CanonicalRequest>]> = [
    ['image', { messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'https://x/y.png' } }] }] }],
    ['image', { messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/bmp', data: 'Qk0=' } }] }] }],
  ];
  for (const [param, extra] of refused) {
    assert.throws(() => codec.encodeRequest({ ...base, ...extra }, target('m')),
      (e: unknown) => e instanceof GatewayError && e.code === 'unsupported_parameter' && e.status === 400 && e.param === param, param);
  }
  const dropped = codec.encodeRequest({
    ...base, container: 'c', logit_bias: { '1': 1 }, frequency_penalty: 1, presence_penalty: 1, seed: 1, verbosity: 'high',
    response_format: { type: 'json_object' },
  }, target('m'));
  const body = dropped.body as Record<string, unknown>;
  for (const k of ['container', 'logit_bias', 'frequency_penalty', 'presence_penalty', 'seed', 'verbosity']) {
    assert.ok(dropped.adjustments?.some((a) => a.startsWith(`${k}=dropped`)), k);
    assert.equal(JSON.stringify(body).includes(`"${k}"`), false, k);
  }
  assert.ok(dropped.adjustments?.includes('response_format=json_object->system instruction'));
  assert.match(JSON.stringify(body.system), /single valid JSON object/);
  // tool_choice none once tool blocks exist: Converse has no "none" and needs the tools with tool
  // blocks, so the tools are left out and the calls and results go as text (the model cannot call one).
  const loop = codec.encodeRequest({
    ...base, tools: [{ name: 't', input_schema: {} }], tool_choice: { type: 'none' },
    messages: [{ role: 'user', content: [{ type: 'text', text: 'go' }] }, { role: 'assistant', content: [{ type: 'tool_use', id: 'a', name: 't', input: {} }] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'a', content: [] }] }],
  }, target('m'));
  assert.equal((loop.body as Record<string, unknown>).toolConfig, undefined);
  assert.deepEqual((loop.body as { messages: unknown }).messages, [
    { role: 'user', content: [{ text: 'go' }] },
    { role: 'assistant', content: [{ text: 'Called tool t (call a) with input {}.' }] },
    { role: 'user', content: [{ text: 'Result of t (call a): (no output)' }] },
  ]);
  assert.ok(loop.adjustments?.some((a) => a.startsWith('tool_history=text(tool_choice none')));
  // tool_choice none without tool blocks in the conversation: tools are simply not offered.
  const none = codec.encodeRequest({ ...base, tools: [{ name: 't', input_schema: {} }], tool_choice: { type: 'none' } }, target('m'));
  assert.equal((none.body as Record<string, unknown>).toolConfig, undefined);
});

test('Bedrock error bodies decode to error kinds', () => {
  assert.deepEqual(codec.decodeError(429, '{"message":"Too many requests, please wait before trying again."}'),
    { kind: 'rate_limit', message: 'Too many requests, please wait before trying again.' });
  assert.deepEqual(codec.decodeError(400, '{"__type":"com.amazon.coral.validate#ValidationException","message":"messages: field required"}'),
    { kind: 'invalid_request', message: 'messages: field required', upstreamType: 'ValidationException' });
  assert.equal(codec.decodeError(403, '{"Message":"The security token included in the request is invalid.","__type":"UnrecognizedClientException"}').kind, 'authentication');
  assert.equal(codec.decodeError(403, '{"message":"You don\'t have access to the model"}').kind, 'permission');
  assert.equal(codec.decodeError(429, '{"__type":"ModelNotReadyException","message":"not ready"}').kind, 'overloaded');
  assert.equal(codec.decodeError(503, '{"message":"Service unavailable"}').kind, 'overloaded');
  assert.equal(codec.decodeError(408, '{"__type":"ModelTimeoutException","message":"slow"}').kind, 'timeout');
  assert.equal(codec.decodeError(404, '{"message":"model not found"}').kind, 'not_found');
  assert.deepEqual(codec.decodeError(500, ''), { kind: 'api_error', message: 'upstream returned HTTP 500' });
  // The exception name from the x-amzn-ErrorType header wins over the status.
  assert.deepEqual(decodeBedrockError(429, '{"message":"Model is not ready"}', { 'X-Amzn-ErrorType': 'ModelNotReadyException:http://internal.amazon.com/coral/com.amazon.bedrock/' }),
    { kind: 'overloaded', message: 'Model is not ready', upstreamType: 'ModelNotReadyException' });
});
