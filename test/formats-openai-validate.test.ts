// Validation of chat-completions bodies and the 400s the decoder raises for what it cannot carry.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rejectsWith } from './helpers/assert.ts';
import { openaiChatCodec, validateChatRequest } from '../src/formats/openai-chat/index.ts';

const base = (): Record<string, unknown> => ({ model: 'openai/gpt-5', messages: [{ role: 'user', content: 'hi' }] });

const rejects = rejectsWith;

const cases: Array<[string, Record<string, unknown>, string, string | null, RegExp?]> = [
  ['body not an object', [] as unknown as Record<string, unknown>, 'invalid_body', null],
  ['model missing', { model: undefined }, 'missing_parameter', 'model'],
  ['model empty', { model: '' }, 'invalid_parameter', 'model'],
  ['messages empty', { messages: [] }, 'invalid_parameter', 'messages'],
  ['messages missing', { messages: undefined }, 'missing_parameter', 'messages'],
  ['message not an object', { messages: ['hi'] }, 'invalid_parameter', 'messages[0]'],
  ['bad role', { messages: [{ role: 'robot', content: 'x' }] }, 'invalid_parameter', 'messages[0].role'],
  ['user content missing', { messages: [{ role: 'user' }] }, 'missing_parameter', 'messages[0].content'],
  ['bad part type', { messages: [{ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'video' }] }] }, 'invalid_parameter', 'messages[0].content[1].type'],
  ['image_url without url', { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: {} }] }] }, 'invalid_parameter', 'messages[0].content[0].image_url.url'],
  ['tool message without id', { messages: [{ role: 'user', content: 'a' }, { role: 'tool', content: 'r' }] }, 'missing_parameter', 'messages[1].tool_call_id'],
  ['tool call arguments not a string', { messages: [{ role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: {} } }] }] }, 'invalid_parameter', 'messages[0].tool_calls[0].function.arguments'],
  ['n = 2', { n: 2 }, 'invalid_parameter', 'n', /separate calls/],
  ['temperature 2.5', { temperature: 2.5 }, 'invalid_parameter', 'temperature', /between 0 and 2/],
  ['temperature string', { temperature: '1' }, 'invalid_parameter', 'temperature'],
  ['top_p 1.5', { top_p: 1.5 }, 'invalid_parameter', 'top_p'],
  ['frequency_penalty -3', { frequency_penalty: -3 }, 'invalid_parameter', 'frequency_penalty'],
  ['presence_penalty 2.1', { presence_penalty: 2.1 }, 'invalid_parameter', 'presence_penalty'],
  ['max_tokens 0', { max_tokens: 0 }, 'invalid_parameter', 'max_tokens'],
  ['max_completion_tokens 1.5', { max_completion_tokens: 1.5 }, 'invalid_parameter', 'max_completion_tokens'],
  ['stop with a number', { stop: ['a', 1] }, 'invalid_parameter', 'stop'],
  ['logit_bias out of range', { logit_bias: { '5': 101 } }, 'invalid_parameter', 'logit_bias.5'],
  ['non-function tool', { tools: [{ type: 'web_search' }] }, 'invalid_parameter', 'tools[0].type'],
  ['tool name with spaces', { tools: [{ type: 'function', function: { name: 'a b' } }] }, 'invalid_parameter', 'tools[0].function.name'],
  ['tool_choice unknown string', { tool_choice: 'always' }, 'invalid_parameter', 'tool_choice'],
  ['tool_choice object without name', { tool_choice: { type: 'function', function: {} } }, 'invalid_parameter', 'tool_choice'],
  ['response_format type', { response_format: { type: 'xml' } }, 'invalid_parameter', 'response_format.type'],
  ['json_schema without schema object', { response_format: { type: 'json_schema', json_schema: { name: 'x', schema: 3 } } }, 'invalid_parameter', 'response_format.json_schema.schema'],
  ['reasoning_effort extreme', { reasoning_effort: 'extreme' }, 'invalid_parameter', 'reasoning_effort'],
  ['stream not boolean', { stream: 'yes' }, 'invalid_parameter', 'stream'],
  ['metadata value not string', { metadata: { a: 1 } }, 'invalid_parameter', 'metadata.a'],
];

for (const [name, patch, code, param, message] of cases) {
  test(`validateChatRequest rejects: ${name}`, () => {
    const body = Array.isArray(patch) ? patch : { ...base(), ...patch };
    rejects(() => validateChatRequest(body), code, param, message);
  });
}

test('every reasoning_effort the SDK types name passes, each decoded as sent', () => {
  // openai's shared ReasoningEffort: 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh' | 'max'.
  for (const effort of ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'] satisfies Array<NonNullable<import('openai').OpenAI.ReasoningEffort>>) {
    const req = openaiChatCodec.client!.decodeRequest(validateChatRequest({ ...base(), reasoning_effort: effort }));
    assert.equal(req.reasoning_effort, effort);
  }
});

test('valid bodies pass, including unknown fields, router fields, n = 1 and nulls', () => {
  const body = { ...base(), n: 1, temperature: 0, top_p: null, some_new_sdk_field: { x: 1 }, models: ['a'], max_cost: 1, extra: { k: 'v' } };
  assert.equal(validateChatRequest(body), body);
  assert.equal(validateChatRequest({ ...base(), messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] }] }).model, 'openai/gpt-5');
});

test('decodeRequest refuses what the canonical model cannot carry', () => {
  const decode = (patch: Record<string, unknown>) => () => openaiChatCodec.client!.decodeRequest(validateChatRequest({ ...base(), ...patch }));
  rejects(decode({ messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'x', format: 'wav' } }] }] }), 'unsupported_parameter', 'messages[0].content[0].type');
  rejects(decode({ messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'file-1' } }] }] }), 'unsupported_parameter', 'messages[0].content[0].file');
});

test('decodeRequest takes tool call arguments that are not JSON, as OpenAI does: kept as written beside an empty input (src/formats/tool-arguments.ts)', () => {
  const req = openaiChatCodec.client!.decodeRequest(validateChatRequest({ ...base(), messages: [{ role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{oops' } }] }] }));
  assert.deepEqual(req.messages[0]!.content.find((b) => b.type === 'tool_use'), { type: 'tool_use', id: 'c', name: 'f', input: {}, raw_arguments: '{oops' });
});

test('upstream encode: Anthropic-only features are dropped or applied and reported; documents by URL are refused', () => {
  const req = openaiChatCodec.client!.decodeRequest(validateChatRequest(base()));
  const target = { upstreamModel: 'gpt-5', provider: 'openai' };
  const c = openaiChatCodec.upstream.encodeRequest({ ...req, container: 'c1' }, target);
  assert.ok(c.adjustments?.includes('container=dropped(Anthropic code execution)'));
  assert.equal((c.body as Record<string, unknown>).container, undefined);
  const cm = openaiChatCodec.upstream.encodeRequest({ ...req, context_management: {}, context_edits: [] }, target);
  assert.ok(cm.adjustments?.includes('context_management=dropped(no edits)'));
  const urlDoc = { ...req, messages: [{ role: 'user' as const, content: [{ type: 'document' as const, source: { type: 'url' as const, url: 'https://e.x/a.pdf' } }] }] };
  rejects(() => openaiChatCodec.upstream.encodeRequest(urlDoc, target), 'unsupported_parameter', 'messages[0].content[0]');
});

test('thinking budgets map to reasoning effort only on reasoning targets', () => {
  const req = { ...openaiChatCodec.client!.decodeRequest(validateChatRequest(base())), thinking: { type: 'enabled' as const, budget_tokens: 20000 } };
  const model = (reasoning: boolean) => ({ max_completion_tokens: 100000, context_window: 200000, capabilities: { tools: true, vision: true, reasoning, structured_output: true, prompt_caching: false } });
  const enc = (reasoning?: boolean) => openaiChatCodec.upstream.encodeRequest(req, { upstreamModel: 'o', provider: 'p', ...(reasoning !== undefined ? { model: model(reasoning) } : {}) });
  assert.equal((enc(true).body as Record<string, unknown>).reasoning_effort, 'high');
  assert.deepEqual(enc(true).adjustments, ['thinking.budget_tokens=20000->reasoning_effort(high)']);
  assert.equal((enc(false).body as Record<string, unknown>).reasoning_effort, undefined);
  assert.deepEqual(enc(false).adjustments, ['thinking=dropped(model does not reason)']);
  assert.equal((enc().body as Record<string, unknown>).reasoning_effort, undefined);
});

test('decodeError handles bare messages and unknown statuses', () => {
  assert.deepEqual(openaiChatCodec.upstream.decodeError(401, '{"error":{"message":"Incorrect API key","type":"invalid_request_error","code":"invalid_api_key"}}'),
    { kind: 'authentication', message: 'Incorrect API key', upstreamType: 'invalid_request_error' });
  assert.deepEqual(openaiChatCodec.upstream.decodeError(503, '{"message":"down"}'), { kind: 'overloaded', message: 'down' });
  assert.deepEqual(openaiChatCodec.upstream.decodeError(418, ''), { kind: 'invalid_request', message: 'upstream returned HTTP 418' });
});
