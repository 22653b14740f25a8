// Gemini codec: golden {in, out} fixtures per direction, finish reasons, errors, refusals of
// unsupported parameters, and the thought-signature round trip.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { geminiCodec } from '../src/formats/gemini/index.ts';
import { geminiStopReason } from '../src/formats/gemini/decode.ts';
import type { CanonicalRequest, StreamEvent } from '../src/formats/canonical.ts';
import type { StreamDecoder } from '../src/formats/codec.ts';
import { GatewayError } from '../src/gateway-error.ts';
import { markResponse, signerOf } from '../src/formats/signatures.ts';

const codec = geminiCodec.upstream;
const dir = new URL('./fixtures/formats/gemini/', import.meta.url);
type Fixture = { about: string; model?: string; in: unknown; out: unknown };
const fixtures = readdirSync(dir).filter((f) => f.endsWith('.json')).sort()
  .map((f) => ({ name: f, fx: JSON.parse(readFileSync(new URL(f, dir), 'utf8')) as Fixture }));
/** A catalog entry as the gateway passes it: a thinking model, or (reasoning false) one that does not think. */
const entry = (reasoning = true) => ({ max_completion_tokens: 65536, context_window: 1048576, capabilities: { tools: true, vision: true, reasoning, structured_output: true, prompt_caching: true } });
const target = (model: string, reasoning = true) => ({ upstreamModel: model, provider: 'google', model: entry(reasoning) });

const drain = (d: StreamDecoder, chunks: Uint8Array[]): StreamEvent[] => [...chunks.flatMap((c) => d.push(c)), ...d.end()];

for (const { name, fx } of fixtures) {
  test(`gemini fixture ${name}: ${fx.about}`, () => {
    if (name.startsWith('encode-')) {
      const req = fx.in as CanonicalRequest;
      assert.deepEqual(codec.encodeRequest(req, target(fx.model ?? req.model)), fx.out);
    } else if (name.startsWith('decode-')) {
      assert.deepEqual(codec.decodeResponse(fx.in), fx.out);
    } else if (name.startsWith('stream-')) {
      const bytes = new TextEncoder().encode(fx.in as string);
      assert.deepEqual(drain(codec.newStreamDecoder(), [bytes]), fx.out);
      // The same bytes one at a time decode to the same events.
      assert.deepEqual(drain(codec.newStreamDecoder(), [...bytes].map((b) => Uint8Array.of(b))), fx.out);
    } else {
      assert.fail(`fixture ${name} has no known direction prefix`);
    }
  });
}

test('every Gemini finish reason maps to a canonical stop reason', () => {
  const table: Array<[string | undefined, boolean, string | null]> = [
    ['STOP', false, 'end_turn'], ['STOP', true, 'tool_use'], ['MAX_TOKENS', false, 'max_tokens'],
    ['MAX_TOKENS', true, 'max_tokens'], ['SAFETY', false, 'refusal'], ['RECITATION', false, 'refusal'],
    ['BLOCKLIST', false, 'refusal'], ['PROHIBITED_CONTENT', false, 'refusal'], ['SPII', false, 'refusal'],
    ['IMAGE_SAFETY', false, 'refusal'], ['LANGUAGE', false, 'refusal'], ['MALFORMED_FUNCTION_CALL', false, 'end_turn'],
    ['OTHER', false, 'end_turn'], ['FINISH_REASON_UNSPECIFIED', false, null], [undefined, false, null],
  ];
  for (const [reason, calls, want] of table) assert.equal(geminiStopReason(reason, calls), want, `${reason} calls=${calls}`);
});

test('a decoded response replays to the same Gemini parts, signatures on the same parts', () => {
  const parts = [
    { text: 'plan', thought: true, thoughtSignature: 'S1' },
    { functionCall: { id: 'fc-1', name: 'f', args: { a: 1 } }, thoughtSignature: 'S2' },
    { text: 'done' },
    { text: '', thoughtSignature: 'S3' },
  ];
  const res = codec.decodeResponse({ candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP' }], responseId: 'r' });
  markResponse(res, signerOf('gemini', 'm'), 'openai-responses'); // as a client of another format gives it back
  const req: CanonicalRequest = {
    model: 'm', system: [], stream: false,
    messages: [{ role: 'user', content: [{ type: 'text', text: 'go' }] }, { role: 'assistant', content: res.content }],
  };
  const body = codec.encodeRequest(req, target('m')).body as { contents: Array<{ role: string; parts: unknown[] }> };
  assert.deepEqual(body.contents[1], { role: 'model', parts });
});

test('tool_choice modes and reasoning effort', () => {
  const base: CanonicalRequest = {
    model: 'm', system: [], stream: false, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
    tools: [{ name: 't', input_schema: { type: 'object' } }],
  };
  const cfg = (r: Partial<CanonicalRequest>) => codec.encodeRequest({ ...base, ...r }, target('m')).body as Record<string, unknown>;
  assert.deepEqual(cfg({ tool_choice: { type: 'auto' } }).toolConfig, { functionCallingConfig: { mode: 'AUTO' } });
  assert.deepEqual(cfg({ tool_choice: { type: 'any' } }).toolConfig, { functionCallingConfig: { mode: 'ANY' } });
  assert.deepEqual(cfg({ tool_choice: { type: 'none' } }).toolConfig, { functionCallingConfig: { mode: 'NONE' } });
  assert.equal(cfg({}).toolConfig, undefined);
  assert.deepEqual(cfg({ reasoning_effort: 'low' }).generationConfig, { thinkingConfig: { thinkingBudget: 1024, includeThoughts: true } });
  assert.deepEqual(cfg({ thinking: { type: 'disabled' } }).generationConfig, { thinkingConfig: { thinkingBudget: 0 } });
  assert.deepEqual(cfg({ response_format: { type: 'json_object' } }).generationConfig, { responseMimeType: 'application/json' });
});

test('parameters Gemini lacks are dropped and reported; a tool result answering no call is refused', () => {
  const base: CanonicalRequest = { model: 'm', system: [], stream: false, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] };
  const enc = codec.encodeRequest({ ...base, container: { id: 'c' }, logit_bias: { '50256': -100 }, verbosity: 'low' } as CanonicalRequest, target('m'));
  assert.deepEqual(enc.adjustments, ['container=dropped(Anthropic code execution)', 'logit_bias=dropped', 'verbosity=dropped']);
  assert.deepEqual(Object.keys(enc.body as object), ['contents']);
  const orphan: CanonicalRequest = { ...base, messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'nope', content: [] }] }] };
  assert.throws(() => codec.encodeRequest(orphan, target('m')), (e: unknown) => e instanceof GatewayError && e.status === 400);
});

test('Gemini error envelopes decode to error kinds', () => {
  const env = (code: number, status: string, message: string, details: unknown[] = []) =>
    JSON.stringify({ error: { code, message, status, details } });
  assert.deepEqual(codec.decodeError(400, env(400, 'INVALID_ARGUMENT', 'Invalid JSON payload')),
    { kind: 'invalid_request', message: 'Invalid JSON payload', upstreamType: 'INVALID_ARGUMENT' });
  assert.deepEqual(codec.decodeError(400, env(400, 'INVALID_ARGUMENT', 'API key not valid.', [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID' }])),
    { kind: 'authentication', message: 'API key not valid.', upstreamType: 'INVALID_ARGUMENT' });
  assert.equal(codec.decodeError(429, env(429, 'RESOURCE_EXHAUSTED', 'quota')).kind, 'rate_limit');
  assert.equal(codec.decodeError(503, env(503, 'UNAVAILABLE', 'overloaded')).kind, 'overloaded');
  assert.equal(codec.decodeError(403, env(403, 'PERMISSION_DENIED', 'no')).kind, 'permission');
  assert.equal(codec.decodeError(504, env(504, 'DEADLINE_EXCEEDED', 'slow')).kind, 'timeout');
  assert.equal(codec.decodeError(500, `[${env(500, 'INTERNAL', 'boom')}]`).message, 'boom');
  assert.deepEqual(codec.decodeError(502, '<html>Bad Gateway</html>'), { kind: 'api_error', message: 'upstream returned HTTP 502 with an HTML page: Bad Gateway' });
});
