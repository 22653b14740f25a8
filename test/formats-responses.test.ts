// The Responses codec on its own: Codex's tool shapes (namespace and custom tools, as Codex 0.169
// sends them) decoded to canonical tools and their calls turned back into namespaced / custom call
// items; interleaved tool blocks in a stream (parallel calls from an OpenAI upstream) each keep their
// own output item; reasoning packed into encrypted_content comes back as the same signed thinking;
// a stream error after output ends with error + response.failed; hosted tools reported, not sent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeResponsesRequest } from '../src/formats/openai-responses/decode-request.ts';
import { readForRanking } from '../src/formats/openai-responses/native-only.ts';
import { encodeResponsesResponse } from '../src/formats/openai-responses/response.ts';
import { createResponsesStreamEncoder } from '../src/formats/openai-responses/stream-encoder.ts';
import { validateResponsesRequest } from '../src/formats/openai-responses/validate.ts';
import type { StreamEvent } from '../src/formats/canonical.ts';

type Rec = Record<string, any>;

const CODEX_TOOLS = [
  { type: 'function', name: 'exec_command', strict: false, parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] } },
  { type: 'namespace', name: 'multi_agent_v1', description: 'Sub-agents.', tools: [
    { type: 'function', name: 'close_agent', strict: false, parameters: { type: 'object', properties: { target: { type: 'string' } }, required: ['target'] } },
  ] },
  { type: 'custom', name: 'apply_patch', description: 'Apply a patch.', format: { type: 'grammar', syntax: 'lark', definition: 'start: "*** Begin Patch"' } },
  { type: 'web_search', external_web_access: false },
];

test('namespace and custom tools decode to canonical tools; calls map back; hosted tools are reported', () => {
  const body = validateResponsesRequest({ model: 'ant/x', input: 'hi', tools: CODEX_TOOLS, tool_choice: 'auto' });
  const req = decodeResponsesRequest(body);
  assert.deepEqual(req.tools!.map((t) => t.name), ['exec_command', 'multi_agent_v1__close_agent', 'apply_patch']);
  assert.deepEqual(req.tools![2]!.input_schema, { type: 'object', properties: { input: { type: 'string', description: 'The raw input of the tool, as free text.' } }, required: ['input'], additionalProperties: false });
  assert.match(req.tools![2]!.description!, /lark/);
  assert.deepEqual(req.decode_adjustments, ['tools.web_search=dropped (hosted by OpenAI)']);
  const res = encodeResponsesResponse({
    id: '01a20958-c42c-7ca1-bd54-18ce92424ad0', model: 'ant/x', stop_reason: 'tool_use', stop_sequence: null,
    usage: { input_tokens: 1, output_tokens: 1, cache_read_input_tokens: 0, cache_creation_input_tokens: 0, cache_creation_5m: 0, cache_creation_1h: 0, reasoning_tokens: 0 },
    content: [
      { type: 'tool_use', id: 'toolu_1', name: 'multi_agent_v1__close_agent', input: { target: 'a1' } },
      { type: 'tool_use', id: 'toolu_2', name: 'apply_patch', input: { input: '*** Begin Patch' } },
    ],
  }, body);
  assert.deepEqual(res.output, [
    { id: 'fc_01a20958c42c7ca1bd5418ce92424ad00000', type: 'function_call', status: 'completed', arguments: '{"target":"a1"}', call_id: 'toolu_1', name: 'close_agent', namespace: 'multi_agent_v1' },
    { id: 'ctc_01a20958c42c7ca1bd5418ce92424ad00001', type: 'custom_tool_call', status: 'completed', call_id: 'toolu_2', name: 'apply_patch', input: '*** Begin Patch' },
  ]);
  // Sent back by the client, they become the same canonical calls.
  const next = decodeResponsesRequest(validateResponsesRequest({ model: 'ant/x', tools: CODEX_TOOLS, input: [
    { role: 'user', content: 'go' }, ...(res.output as Rec[]),
    { type: 'function_call_output', call_id: 'toolu_1', output: 'closed' }, { type: 'custom_tool_call_output', call_id: 'toolu_2', output: 'patched' },
  ] }));
  assert.deepEqual(next.messages[1]!.content, [
    { type: 'tool_use', id: 'toolu_1', name: 'multi_agent_v1__close_agent', input: { target: 'a1' } },
    { type: 'tool_use', id: 'toolu_2', name: 'apply_patch', input: { input: '*** Begin Patch' } },
  ]);
  assert.deepEqual(next.messages[2]!.content.map((b) => b.type), ['tool_result', 'tool_result']);
});

const frames = (sse: string): Rec[] => sse.split('\n\n').filter((f) => f.includes('data: ')).map((f) => JSON.parse(f.slice(f.indexOf('data: ') + 6)) as Rec);

test('stream: interleaved tool blocks keep their own items; thinking packs text and signature', () => {
  const enc = createResponsesStreamEncoder({ request: { model: 'm', input: 'x', tools: CODEX_TOOLS.slice(0, 1) }, created: 1 });
  const evs: StreamEvent[] = [
    { type: 'message_start', id: '01a20958-c42c-7ca1-bd54-18ce92424ad0', model: 'p/m', usage: { input_tokens: 5 } },
    { type: 'block_start', index: 0, block: { type: 'thinking', thinking: '', signature: '' } },
    { type: 'block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'hmm' } },
    { type: 'block_delta', index: 0, delta: { type: 'signature_delta', signature: 'SIG' } },
    { type: 'block_stop', index: 0 },
    { type: 'block_start', index: 1, block: { type: 'tool_use', id: 'c1', name: 'exec_command', input: {} } },
    { type: 'block_start', index: 2, block: { type: 'tool_use', id: 'c2', name: 'exec_command', input: {} } },
    { type: 'block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"cmd":' } },
    { type: 'block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"cmd":"b"}' } },
    { type: 'block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '"a"}' } },
    { type: 'message_delta', stop_reason: 'tool_use', stop_sequence: null, usage: { output_tokens: 9 } },
    { type: 'message_stop' },
  ];
  const out = frames(evs.map((e) => enc.encode(e)).join('') + enc.end());
  assert.deepEqual(out.map((e) => e.sequence_number), out.map((_, i) => i));
  const args = out.filter((e) => e.type === 'response.function_call_arguments.delta').map((e) => [e.output_index, e.delta]);
  assert.deepEqual(args, [[1, '{"cmd":'], [2, '{"cmd":"b"}'], [1, '"a"}']]);
  const done = out.at(-1)!;
  assert.equal(done.type, 'response.completed');
  const output = done.response.output as Rec[];
  assert.deepEqual(output.map((o) => o.type), ['reasoning', 'function_call', 'function_call']);
  assert.deepEqual(output.slice(1).map((o) => [o.call_id, o.arguments]), [['c1', '{"cmd":"a"}'], ['c2', '{"cmd":"b"}']]);
  assert.deepEqual(output[0]!.summary, [{ type: 'summary_text', text: 'hmm' }]);
  assert.deepEqual(done.response.usage, { input_tokens: 5, input_tokens_details: { cached_tokens: 0 }, output_tokens: 9, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 14 });
  // The reasoning item given back decodes to the same signed thinking.
  const back = decodeResponsesRequest(validateResponsesRequest({ model: 'm', input: [{ role: 'user', content: 'x' }, output[0]] }));
  assert.deepEqual(back.messages[1]!.content, [{ type: 'thinking', thinking: 'hmm', signature: 'SIG' }]);
});

test('stream: an upstream failure after output ends with error then response.failed', () => {
  const enc = createResponsesStreamEncoder({ request: { model: 'm', input: 'x' } });
  let sse = enc.encode({ type: 'message_start', id: 'i', model: 'p/m', usage: {} });
  sse += enc.encode({ type: 'block_start', index: 0, block: { type: 'text', text: '' } });
  sse += enc.encode({ type: 'block_delta', index: 0, delta: { type: 'text_delta', text: 'partial' } });
  sse += enc.encode({ type: 'error', error: { type: 'rate_limit', message: 'slow down' } });
  sse += enc.encode({ type: 'message_stop' });
  const out = frames(sse);
  assert.deepEqual(out.slice(-2).map((e) => e.type), ['error', 'response.failed']);
  assert.equal(out.at(-2)!.code, 'rate_limit_exceeded');
  assert.deepEqual(out.at(-1)!.response.error, { code: 'rate_limit_exceeded', message: 'slow down' });
  assert.equal(out.at(-1)!.response.status, 'failed');
  assert.ok(!out.some((e) => e.type === 'response.completed'), 'nothing after the failure');
});

test('validation names the field; unknown item types pass validation and are refused by the decoder', () => {
  assert.throws(() => validateResponsesRequest({ model: 'm', input: [{ type: 'message', role: 'user' }] }), { param: 'input[0].content' });
  assert.throws(() => validateResponsesRequest({ model: 'm', input: 'x', text: { format: { type: 'json_schema', name: 'n' } } }), { param: 'text.format.schema' });
  assert.throws(() => validateResponsesRequest({ model: 'm', input: 'x', reasoning: { effort: 'extreme' } }), { param: 'reasoning.effort' });
  assert.throws(() => validateResponsesRequest({ model: 'm', input: 'x', metadata: { k: 1 } }), { param: 'metadata.k' });
  const body = validateResponsesRequest({ model: 'm', input: [{ type: 'item_reference', id: 'msg_1' }] });
  assert.throws(() => decodeResponsesRequest(body), { code: 'unsupported_parameter', param: 'input[0].type' });
  assert.throws(() => decodeResponsesRequest(validateResponsesRequest({ model: 'm', input: [{ role: 'system', content: 'only instructions' }] })), { param: 'input' });
});

test('readForRanking: the translator\'s reading, with what only a Responses server reads listed and its text standing in', () => {
  const plain = validateResponsesRequest({ model: 'router', input: [{ role: 'user', content: 'hi' }], tools: CODEX_TOOLS, tool_choice: 'auto' });
  const read = readForRanking(plain);
  assert.deepEqual(read, { req: decodeResponsesRequest(plain), nativeOnly: [], uncounted: [] });
  const body = validateResponsesRequest({ model: 'router', tools: [{ type: 'computer_use_preview', display_width: 1024, display_height: 768, environment: 'browser' }], tool_choice: { type: 'computer_use_preview' }, input: [
    { role: 'user', content: 'open the page' },
    { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'open_page', url: 'https://example.com/a' } },
    { type: 'computer_call_output', call_id: 'call_1', output: { type: 'computer_screenshot', image_url: `data:image/png;base64,${'A'.repeat(4000)}` }, acknowledged_safety_checks: [{ id: 'sc_1', code: 'malicious_instructions', message: 'check the page' }] },
    { type: 'item_reference', id: 'msg_9' },
    { type: 'compaction', id: 'cmp_1', encrypted_content: 'gAAAAB-openai-sealed' },
    { role: 'user', content: 'and now?' },
  ] });
  assert.throws(() => decodeResponsesRequest(body), /input item type 'web_search_call'/);
  const r = readForRanking(body);
  assert.deepEqual(r.nativeOnly, ['input[1] web_search_call', 'input[2] computer_call_output', 'input[3] item_reference', 'input[4] compaction', 'tool_choice computer_use_preview']);
  assert.deepEqual(r.uncounted, ['input[2] computer_call_output', 'input[3] item_reference', 'input[4] compaction'], 'a screenshot, a reference and sealed text: tokens unknown before the call');
  // The search's URL as the model's turn, the safety check's words as the client's (the screenshot's base64 is data, not text); sealed items carry none.
  assert.deepEqual(r.req.messages.map((m) => [m.role, m.content.map((b) => (b.type === 'text' ? b.text : b.type))]), [
    ['user', ['open the page']], ['assistant', ['https://example.com/a']], ['user', ['malicious_instructions\ncheck the page', 'and now?']],
  ]);
  assert.equal(r.req.tool_choice?.type, 'auto');
});
