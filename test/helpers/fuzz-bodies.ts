// fast-check arbitraries for every route's request body: valid shapes (from the API references and the
// SDKs' types) with any field sometimes swapped for arbitrary JSON, plus raw byte soup. Shared by the
// HTTP fuzz (test/fuzz-routes.test.ts) and the direct validator/decoder fuzz (test/fuzz-parsers.test.ts).
import fc from 'fast-check';

export const anyJson = fc.jsonValue({ maxDepth: 3 });
/** Mostly the valid arbitrary, sometimes anything at all. */
export const maybe = <T>(valid: fc.Arbitrary<T>): fc.Arbitrary<unknown> => fc.oneof({ weight: 30, arbitrary: valid }, { weight: 1, arbitrary: anyJson });
export const text = fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom('', 'weather in Paris?', 'use the tool', 'refuse me', '\u0000\r\n\ud800', 'x'.repeat(300)));
export const models = fc.oneof({ weight: 6, arbitrary: fc.constantFrom('oai/test-model', 'ant/test-model', 'gem/test-model', 'bed/test-model') },
  { weight: 1, arbitrary: fc.constantFrom('router', 'test-model', 'oai/', 'nope/nothing', '', 'oai/test-model\r\nx-injected: 1', `oai/${'m'.repeat(5000)}`) });
export const nums = fc.oneof(fc.integer({ min: -10, max: 200_000 }), fc.double({ noNaN: false }), fc.constantFrom(0, 1, 2, 1e308, -0));
/** Values valid for the common sampling and size parameters (the junk comes from `maybe`). */
export const tokens = fc.integer({ min: 1, max: 4096 });
export const unit = fc.double({ min: 0, max: 1, noNaN: true });
export const temperature = fc.double({ min: 0, max: 2, noNaN: true });
const role = (roles: string[]) => fc.oneof({ weight: 4, arbitrary: fc.constant('user') }, { weight: 2, arbitrary: fc.constantFrom(...roles) });
export const schema = fc.oneof(fc.constant({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }), anyJson);
export const open = { requiredKeys: [] as never[] };

export const chatMessage = fc.record({
  role: maybe(role(['assistant', 'system', 'developer'])),
  content: maybe(fc.oneof(text, text, text,  fc.array(fc.record({ type: maybe(fc.constantFrom('text', 'image_url', 'input_audio', 'file')), text: maybe(text), image_url: maybe(fc.record({ url: maybe(fc.constantFrom('https://example.com/a.png', 'data:image/png;base64,iVBORw0KGgo=', 'ftp://x')) })) }, open), { maxLength: 3 }))),
  tool_calls: maybe(fc.array(fc.record({ id: maybe(fc.string({ maxLength: 8 })), type: maybe(fc.constant('function')), function: maybe(fc.record({ name: maybe(fc.constantFrom('get_weather', '')), arguments: maybe(fc.constantFrom('{"city":"Paris"}', '{', '')) }, open)) }, open), { maxLength: 2 })),
  tool_call_id: maybe(fc.string({ maxLength: 8 })),
  name: maybe(fc.string({ maxLength: 8 })),
}, { requiredKeys: ['role', 'content'] });
export const chatTool = fc.record({ type: maybe(fc.constant('function')), function: maybe(fc.record({ name: maybe(fc.constantFrom('get_weather', 'x y', '')), description: maybe(text), parameters: maybe(schema), strict: maybe(fc.boolean()) }, open)) }, open);

export const chatBody = fc.record({
  model: maybe(models), messages: maybe(fc.array(chatMessage, { minLength: 1, maxLength: 4 })), stream: maybe(fc.boolean()),
  stream_options: maybe(fc.record({ include_usage: maybe(fc.boolean()) }, open)),
  max_tokens: maybe(tokens), max_completion_tokens: maybe(tokens), temperature: maybe(temperature), top_p: maybe(unit), n: maybe(fc.constant(1)),
  stop: maybe(fc.oneof(text, fc.array(text, { maxLength: 5 }))), tools: maybe(fc.array(chatTool, { maxLength: 3 })),
  tool_choice: maybe(fc.oneof(fc.constantFrom('auto', 'none', 'required'), fc.record({ type: fc.constant('function'), function: fc.record({ name: fc.constantFrom('get_weather', 'missing') }) }))),
  response_format: maybe(fc.oneof(fc.constant({ type: 'json_object' }), fc.record({ type: fc.constant('json_schema'), json_schema: fc.record({ name: fc.constantFrom('out', ''), schema, strict: fc.boolean() }, open) }))),
  reasoning_effort: maybe(fc.constantFrom('minimal', 'low', 'medium', 'high', 'max')), metadata: maybe(fc.dictionary(fc.string({ maxLength: 10 }), text, { maxKeys: 4 })),
  user: maybe(text), seed: maybe(fc.integer()),
  // Router mode parameters (used when model is "router").
  models: maybe(fc.array(models, { maxLength: 4 })), max_cost: maybe(nums), max_cost_per_million_tokens: maybe(nums), willingness_to_pay: maybe(nums), extra: maybe(anyJson),
}, { requiredKeys: ['model', 'messages'] });

export const block = fc.record({
  type: maybe(fc.constantFrom('text', 'image', 'tool_use', 'tool_result', 'thinking', 'document', 'tool_addition', 'tool_removal', 'tool_reference')), text: maybe(text),
  id: maybe(fc.constantFrom('toolu_1', '')), name: maybe(fc.constantFrom('get_weather', '')), input: maybe(anyJson), tool_use_id: maybe(fc.constantFrom('toolu_1', 'nope')),
  content: maybe(fc.oneof(text, fc.array(fc.record({ type: fc.constant('text'), text }), { maxLength: 2 }))), thinking: maybe(text), signature: maybe(fc.string({ maxLength: 12 })),
  source: maybe(fc.record({ type: maybe(fc.constantFrom('base64', 'url')), media_type: maybe(fc.constantFrom('image/png', 'text/plain')), data: maybe(fc.constantFrom('iVBORw0KGgo=', '%%%')), url: maybe(text) }, open)),
  cache_control: maybe(fc.record({ type: maybe(fc.constant('ephemeral')), ttl: maybe(fc.constantFrom('5m', '1h', '2h')) }, open)),
  // Tool search and mid-conversation tool changes (Claude Code's ToolSearch and tool_addition / tool_removal).
  tool_name: maybe(fc.constantFrom('get_weather', 'deferred_tool', '')),
  tool: maybe(fc.record({
    type: maybe(fc.constantFrom('tool_reference', 'tool_definition', 'mcp_tool_reference', 'mcp_toolset_reference')), name: maybe(fc.constantFrom('get_weather', 'deferred_tool', 'added_tool', 'nope')),
    server_name: maybe(fc.constantFrom('jira', '')),
    definition: maybe(fc.record({ name: maybe(fc.constantFrom('added_tool', 'get_weather', 'bad name!')), description: maybe(text), input_schema: maybe(schema), defer_loading: maybe(fc.boolean()) }, open)),
  }, open)),
}, open);
export const anthropicMessage = fc.record({
  role: maybe(role(['assistant', 'system'])), content: maybe(fc.oneof({ weight: 2, arbitrary: text }, { weight: 1, arbitrary: fc.array(block, { maxLength: 3 }) })),
  // A system message's own fields.
  clear_at: maybe(fc.constantFrom('next_user_message', 'never', 'later')), output_config: maybe(fc.record({ effort: maybe(fc.constantFrom('low', 'high', 'ultra')), format: maybe(anyJson) }, open)),
}, { requiredKeys: ['role', 'content'] });
export const messagesFields = {
  model: maybe(models), messages: maybe(fc.array(anthropicMessage, { minLength: 1, maxLength: 4 })),
  system: maybe(fc.oneof(text, fc.array(block, { maxLength: 2 }))),
  tools: maybe(fc.array(fc.record({ name: maybe(fc.constantFrom('get_weather', 'deferred_tool', 'bad name!')), description: maybe(text), input_schema: maybe(schema), type: maybe(fc.constantFrom('custom', 'web_search_20250305')), defer_loading: maybe(fc.boolean()) }, open), { maxLength: 3 })),
  tool_choice: maybe(fc.record({ type: maybe(fc.constantFrom('auto', 'any', 'tool', 'none')), name: maybe(fc.constantFrom('get_weather', 'x')) }, open)),
  thinking: maybe(fc.record({ type: maybe(fc.constantFrom('enabled', 'adaptive', 'disabled')), budget_tokens: maybe(nums), display: maybe(fc.constantFrom('summarized', 'omitted')) }, open)),
  output_config: maybe(fc.record({ effort: maybe(fc.constantFrom('low', 'medium', 'high', 'xhigh', 'max', 'ultra')) }, open)),
  context_management: maybe(fc.record({ edits: maybe(fc.array(fc.record({ type: maybe(fc.constantFrom('clear_thinking_20251015', 'clear_tool_uses_20250919', 'compact')), keep: maybe(anyJson), trigger: maybe(anyJson) }, open), { maxLength: 2 })) }, open)),
  metadata: maybe(fc.record({ user_id: maybe(text) }, open)),
};
export const messagesBody = fc.record({
  ...messagesFields, max_tokens: maybe(tokens), stream: maybe(fc.boolean()), temperature: maybe(unit), top_k: maybe(fc.integer({ min: 1, max: 100 })), top_p: maybe(unit),
  stop_sequences: maybe(fc.array(text, { maxLength: 4 })),
}, { requiredKeys: ['model', 'messages', 'max_tokens'] });
export const countTokensBody = fc.record(messagesFields, { requiredKeys: ['model', 'messages'] });

export const responseItem = fc.oneof(
  fc.record({ type: maybe(fc.constant('message')), role: maybe(fc.constantFrom('user', 'assistant', 'system', 'developer')), content: maybe(fc.oneof(text, fc.array(fc.record({ type: maybe(fc.constantFrom('input_text', 'output_text', 'input_image', 'input_file')), text: maybe(text), image_url: maybe(text) }, open), { maxLength: 2 }))) }, open),
  fc.record({ type: fc.constantFrom('function_call', 'function_call_output', 'reasoning', 'item_reference'), call_id: maybe(fc.constantFrom('call_1', '')), name: maybe(text), arguments: maybe(fc.constantFrom('{}', '{')), output: maybe(text), id: maybe(text), summary: maybe(anyJson), encrypted_content: maybe(text) }, open),
);
export const responsesFields = {
  model: maybe(models), input: maybe(fc.oneof(text, fc.array(responseItem, { maxLength: 4 }))), instructions: maybe(text),
  tools: maybe(fc.array(fc.record({ type: maybe(fc.constantFrom('function', 'web_search', 'namespace', 'file_search')), name: maybe(fc.constantFrom('get_weather', '')), parameters: maybe(schema), strict: maybe(fc.boolean()) }, open), { maxLength: 3 })),
  tool_choice: maybe(fc.oneof(fc.constantFrom('auto', 'none', 'required'), fc.record({ type: fc.constant('function'), name: fc.constantFrom('get_weather', 'x') }))),
  previous_response_id: maybe(fc.constantFrom('resp_01a2', '00000000-0000-7000-8000-000000000000', '')),
  reasoning: maybe(fc.record({ effort: maybe(fc.constantFrom('low', 'high', 'none', 'x')), summary: maybe(fc.constantFrom('auto', 'detailed')) }, open)),
  text: maybe(fc.record({ format: maybe(fc.record({ type: maybe(fc.constantFrom('text', 'json_object', 'json_schema')), name: maybe(text), schema: maybe(schema) }, open)) }, open)),
};
export const responsesBody = fc.record({
  ...responsesFields, stream: maybe(fc.boolean()), store: maybe(fc.boolean()), max_output_tokens: maybe(fc.integer({ min: 16, max: 4096 })), temperature: maybe(temperature),
  metadata: maybe(fc.dictionary(fc.string({ maxLength: 8 }), text, { maxKeys: 3 })), parallel_tool_calls: maybe(fc.boolean()), include: maybe(fc.array(text, { maxLength: 2 })),
}, { requiredKeys: ['model', 'input'] });

export const rankBody = fc.record({
  models: maybe(fc.array(models, { maxLength: 5 })), max_cost: maybe(nums), max_cost_per_million_tokens: maybe(nums), willingness_to_pay: maybe(nums),
  extra: maybe(anyJson), messages: maybe(fc.array(chatMessage, { maxLength: 2 })), model: maybe(fc.constantFrom('router', 'oai/test-model')), max_tokens: maybe(nums),
}, open);

export const metricValue = fc.oneof(fc.boolean(), fc.double(), fc.string({ maxLength: 20 }), fc.constant(null), fc.record({ value: maybe(fc.oneof(fc.boolean(), fc.double(), text)), reason: maybe(text) }, open));
const feedbackValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  v: fc.oneof({ depthSize: 'small' }, metricValue, fc.dictionary(fc.string({ maxLength: 12 }), tie('v'), { maxKeys: 3 })),
})).v;
export const feedbackEvent = fc.record({
  id: maybe(fc.constantFrom('01a20000-0000-7000-8000-000000000000', 'not-a-uuid', '')),
  feedback: maybe(fc.dictionary(fc.string({ maxLength: 16 }), feedbackValue, { maxKeys: 4 })),
  tags: maybe(fc.dictionary(fc.string({ maxLength: 8 }), maybe(text), { maxKeys: 3 })), optimize: maybe(fc.constantFrom('max', 'min', 'up')),
}, open);
export const feedbackBody = fc.oneof({ weight: 4, arbitrary: fc.array(feedbackEvent, { maxLength: 5 }) }, { weight: 1, arbitrary: feedbackEvent }, { weight: 1, arbitrary: anyJson });

export const keyFields = {
  name: maybe(text), models: maybe(fc.array(fc.constantFrom('oai/*', '*', '', 'ant/test-model'), { maxLength: 3 })), allowed_models: maybe(fc.array(text, { maxLength: 2 })),
  budget_usd: maybe(fc.oneof(fc.constantFrom('10', '0.01', '-1', '1e3', 'NaN', ''), nums)), budget_period: maybe(fc.constantFrom('day', 'week', 'month', 'total', 'year')),
  rpm: maybe(nums), tpm: maybe(nums), rpm_limit: maybe(nums), tpm_limit: maybe(nums), expires_at: maybe(fc.constantFrom('2030-01-01T00:00:00Z', '2020-01-01T00:00:00Z', 'tomorrow', '')),
};
export const keyBody = fc.record(keyFields, open);
export const userBody = fc.record({ email: maybe(fc.constantFrom('a@example.com', 'nope', '')), password: maybe(fc.string({ maxLength: 40 })), admin: maybe(fc.boolean()), role: maybe(text), disabled: maybe(fc.boolean()) }, open);
export const embeddingsBody = fc.record({ model: maybe(models), input: maybe(fc.oneof(text, fc.array(text, { maxLength: 3 }), fc.array(fc.integer(), { maxLength: 3 }))), encoding_format: maybe(fc.constantFrom('float', 'base64', 'x')), dimensions: maybe(nums) }, open);

/** Raw bodies no JSON generator makes: bad syntax, deep nesting, huge numbers, BOMs, nothing. */
export const rawBody = fc.oneof(
  fc.string({ maxLength: 60 }),
  fc.constantFrom('', '{', '[]', 'null', '"x"', '{"model":', '\ufeff{}', '{"a":1e999999}', '[' .repeat(5000) + ']'.repeat(5000), '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{"x":1}}}'),
  fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b).toString('latin1')),
);

