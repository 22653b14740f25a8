// Validation of /v1/messages bodies, the decoder's refusals, and upstream encoding limits.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rejectsWith } from './helpers/assert.ts';
import { anthropicMessagesCodec, validateMessagesRequest, DEFAULT_MAX_TOKENS } from '../src/formats/anthropic-messages/index.ts';

const base = (): Record<string, unknown> => ({ model: 'anthropic/claude-x', max_tokens: 1000, messages: [{ role: 'user', content: 'hi' }] });

const rejects = rejectsWith;

const blocks = (...content: unknown[]) => ({ messages: [{ role: 'user', content }] });

const cases: Array<[string, Record<string, unknown>, string, string | null, RegExp?]> = [
  ['max_tokens missing', { max_tokens: undefined }, 'missing_parameter', 'max_tokens'],
  ['max_tokens zero', { max_tokens: 0 }, 'invalid_parameter', 'max_tokens'],
  ['max_tokens fractional', { max_tokens: 10.5 }, 'invalid_parameter', 'max_tokens'],
  ['model number', { model: 5 }, 'invalid_parameter', 'model'],
  ['messages not array', { messages: 'hi' }, 'invalid_parameter', 'messages'],
  ['system role in messages', { messages: [{ role: 'system', content: 'x' }] }, 'invalid_parameter', 'messages[0].role', /'system'/],
  ['content missing', { messages: [{ role: 'user' }] }, 'missing_parameter', 'messages[0].content'],
  ['content number', { messages: [{ role: 'user', content: 3 }] }, 'invalid_parameter', 'messages[0].content'],
  ['block without type', blocks({ text: 'x' }), 'missing_parameter', 'messages[0].content[0].type'],
  ['text block without text', blocks({ type: 'text' }), 'missing_parameter', 'messages[0].content[0].text'],
  ['image without source', blocks({ type: 'image' }), 'missing_parameter', 'messages[0].content[0].source'],
  ['base64 image without data', blocks({ type: 'image', source: { type: 'base64', media_type: 'image/png' } }), 'missing_parameter', 'messages[0].content[0].source.data'],
  ['tool_use input not object', { messages: [{ role: 'user', content: 'q' }, { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'n', input: 'x' }] }] }, 'invalid_parameter', 'messages[1].content[0].input'],
  ['tool_result nested bad block', blocks({ type: 'tool_result', tool_use_id: 't', content: [{ type: 'text', text: 'a' }, { type: 'text' }] }), 'missing_parameter', 'messages[0].content[0].content[1].text'],
  ['thinking without signature', { messages: [{ role: 'user', content: 'q' }, { role: 'assistant', content: [{ type: 'thinking', thinking: 't' }] }] }, 'missing_parameter', 'messages[1].content[0].signature'],
  ['cache_control bad ttl', blocks({ type: 'text', text: 'a', cache_control: { type: 'ephemeral', ttl: '2h' } }), 'invalid_parameter', 'messages[0].content[0].cache_control.ttl'],
  ['cache_control bad type', blocks({ type: 'text', text: 'a', cache_control: { type: 'forever' } }), 'invalid_parameter', 'messages[0].content[0].cache_control.type'],
  ['system block not text', { system: [{ type: 'image' }] }, 'invalid_parameter', 'system[0].type'],
  ['system number', { system: 4 }, 'invalid_parameter', 'system'],
  ['temperature above 1', { temperature: 1.2 }, 'invalid_parameter', 'temperature', /between 0 and 1/],
  ['top_p negative', { top_p: -0.1 }, 'invalid_parameter', 'top_p'],
  ['top_k zero', { top_k: 0 }, 'invalid_parameter', 'top_k'],
  ['stop_sequences string', { stop_sequences: 'END' }, 'invalid_parameter', 'stop_sequences'],
  ['tool without input_schema', { tools: [{ name: 'f' }] }, 'missing_parameter', 'tools[0].input_schema'],
  ['tool bad name', { tools: [{ name: 'a.b', input_schema: {} }] }, 'invalid_parameter', 'tools[0].name'],
  ['tool_choice tool without name', { tool_choice: { type: 'tool' } }, 'missing_parameter', 'tool_choice.name'],
  ['tool_choice bad type', { tool_choice: { type: 'required' } }, 'invalid_parameter', 'tool_choice.type'],
  ['thinking budget too small', { thinking: { type: 'enabled', budget_tokens: 500 } }, 'invalid_parameter', 'thinking.budget_tokens'],
  ['thinking budget not below max_tokens', { thinking: { type: 'enabled', budget_tokens: 2000 } }, 'invalid_parameter', 'thinking.budget_tokens', /less than/],
  ['thinking without budget', { thinking: { type: 'enabled' } }, 'missing_parameter', 'thinking.budget_tokens'],
  ['metadata.user_id number', { metadata: { user_id: 1 } }, 'invalid_parameter', 'metadata.user_id'],
  ['service_tier unknown', { service_tier: 'flex' }, 'invalid_parameter', 'service_tier'],
];

for (const [name, patch, code, param, message] of cases) {
  test(`validateMessagesRequest rejects: ${name}`, () => {
    rejects(() => validateMessagesRequest({ ...base(), ...patch }), code, param, message);
  });
}

test('non-object body is invalid_body', () => rejects(() => validateMessagesRequest('x'), 'invalid_body', null));

test('valid bodies pass, unknown top-level fields ignored', () => {
  const body = { ...base(), anthropic_new_field: true, system: 'S', container: 'container_1', context_management: { edits: [] }, stream: true };
  assert.equal(validateMessagesRequest(body), body);
});

test('decodeRequest refuses server tools and unknown blocks; adaptive thinking decodes with its display', () => {
  const decode = (patch: Record<string, unknown>) => () => anthropicMessagesCodec.client!.decodeRequest(validateMessagesRequest({ ...base(), ...patch }));
  rejects(decode({ tools: [{ type: 'web_search_20250305', name: 'web_search' }] }), 'unsupported_parameter', 'tools[0].type');
  rejects(decode(blocks({ type: 'search_result', source: 's', title: 't', content: [] })), 'unsupported_parameter', 'messages[0].content[0].type');
  rejects(decode(blocks({ type: 'image', source: { type: 'file', file_id: 'f' } })), 'unsupported_parameter', 'messages[0].content[0].source.type');
  assert.deepEqual(decode({ thinking: { type: 'adaptive', display: 'omitted' } })().thinking, { type: 'adaptive', display: 'omitted' });
});

test('legacy beta output_format is read like output_config.format', () => {
  const req = anthropicMessagesCodec.client!.decodeRequest(validateMessagesRequest({ ...base(), output_format: { type: 'json_schema', schema: { type: 'object' } } }));
  assert.deepEqual(req.response_format, { type: 'json_schema', name: 'response', schema: { type: 'object' }, strict: true });
});

test('upstream encode: refuses temperature above 1, defaults max_tokens', () => {
  const req = anthropicMessagesCodec.client!.decodeRequest(validateMessagesRequest(base()));
  const target = { upstreamModel: 'claude-x', provider: 'anthropic' };
  rejects(() => anthropicMessagesCodec.upstream.encodeRequest({ ...req, temperature: 1.5 }, target), 'invalid_parameter', 'temperature');
  const { max_tokens: _, ...noMax } = req;
  const body = anthropicMessagesCodec.upstream.encodeRequest(noMax, target).body as Record<string, unknown>;
  assert.equal(body.max_tokens, DEFAULT_MAX_TOKENS);
  assert.equal(anthropicMessagesCodec.upstream.encodeRequest(req, target).path, '/messages');
});

test('upstream encode drops unsigned thinking (another provider\'s reasoning) and thinking another model signed, keeps Claude\'s', () => {
  const req = anthropicMessagesCodec.client!.decodeRequest(validateMessagesRequest(base()));
  req.messages.push({ role: 'assistant', content: [
    { type: 'thinking', thinking: 'from deepseek', signature: '' }, { type: 'thinking', thinking: 'from gemini', signature: 'gwsig1:gemini:gemini-3-pro-preview:R2Vt' },
    { type: 'thinking', thinking: 'from an unknown signer', signature: 'EqQ' },
    { type: 'thinking', thinking: 'from claude', signature: 'gwsig1:anthropic::EqQ' }, { type: 'text', text: 'answer' },
  ] });
  const enc = anthropicMessagesCodec.upstream.encodeRequest(req, { upstreamModel: 'c', provider: 'anthropic' });
  const body = enc.body as { messages: Array<{ content: unknown[] }> };
  assert.deepEqual(body.messages[1]!.content, [{ type: 'thinking', thinking: 'from claude', signature: 'EqQ' }, { type: 'text', text: 'answer' }]);
  assert.ok(enc.adjustments?.includes('thinking=dropped(2 blocks signed by another model)'), String(enc.adjustments));
});

test('decodeError: Anthropic types win over status; non-JSON bodies fall back to status', () => {
  const d = anthropicMessagesCodec.upstream.decodeError;
  assert.deepEqual(d(429, '{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}'), { kind: 'rate_limit', message: 'slow down', upstreamType: 'rate_limit_error' });
  assert.deepEqual(d(500, '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'), { kind: 'overloaded', message: 'Overloaded', upstreamType: 'overloaded_error' });
  assert.deepEqual(d(504, 'upstream request timeout'), { kind: 'timeout', message: 'upstream request timeout' });
  assert.deepEqual(d(401, '{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}').kind, 'authentication');
});

test('stream decoder reports a stream cut before message_stop', () => {
  const d = anthropicMessagesCodec.upstream.newStreamDecoder();
  const head = 'event: message_start\ndata: {"type":"message_start","message":{"id":"m","model":"c","usage":{"input_tokens":1,"output_tokens":1}}}\n\n';
  const evs = [...d.push(new TextEncoder().encode(head)), ...d.end()];
  assert.equal(evs.length, 2);
  assert.deepEqual(evs[1], { type: 'error', error: { type: 'api_error', message: 'upstream stream ended before message_stop' } });
});
