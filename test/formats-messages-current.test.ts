// The current Messages API at the codec level: where role:system messages may stand, the thinking
// and effort shapes, and the context edits the gateway applies for targets without server-side
// context management (each edit's options, and what it reports).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { anthropicMessagesCodec, validateMessagesRequest } from '../src/formats/anthropic-messages/index.ts';
import { applyContextEdits, CLEARED_RESULT, parseContextEdits } from '../src/formats/context-edits.ts';
import type { CanonicalRequest, Message } from '../src/formats/canonical.ts';
import { GatewayError } from '../src/gateway-error.ts';

const decode = (body: Record<string, unknown>): CanonicalRequest =>
  anthropicMessagesCodec.client!.decodeRequest(validateMessagesRequest({ model: 'm', max_tokens: 4096, ...body }));
const refused = (body: Record<string, unknown>, param: string): void => {
  assert.throws(() => decode(body), (e: unknown) => e instanceof GatewayError && e.status === 400 && e.param === param, param);
};

test('role:system messages: text right after a user turn; never first or after an assistant turn', () => {
  const ok = decode({ messages: [{ role: 'user', content: 'hi' }, { role: 'system', content: [{ type: 'text', text: 'be brief' }] }, { role: 'system', content: 'and kind' }] });
  assert.deepEqual(ok.messages.map((m) => m.role), ['user', 'system', 'system']);
  assert.deepEqual(ok.messages[1]!.content, [{ type: 'text', text: 'be brief' }]);
  refused({ messages: [{ role: 'system', content: 'first' }, { role: 'user', content: 'hi' }] }, 'messages[0].role');
  refused({ messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'yo' }, { role: 'system', content: 'late' }] }, 'messages[2].role');
  refused({ messages: [{ role: 'user', content: 'hi' }, { role: 'system', content: [{ type: 'image', source: { type: 'url', url: 'https://x/y.png' } }] }] }, 'messages[1].content[0].type');
  refused({ messages: [{ role: 'user', content: 'hi' }, { role: 'tool', content: 'x' }] }, 'messages[1].role');
});

test('a system message marked clear_at: next_user_message is left out once a later user turn exists', () => {
  const req = decode({ messages: [
    { role: 'user', content: 'a' }, { role: 'system', content: 'only for a', clear_at: 'next_user_message' }, { role: 'assistant', content: 'b' },
    { role: 'user', content: 'c' }, { role: 'system', content: 'for c', clear_at: 'next_user_message' },
  ] });
  assert.deepEqual(req.messages.map((m) => m.role), ['user', 'assistant', 'user', 'system']);
});

test('thinking types with display, effort levels, and what is refused', () => {
  assert.deepEqual(decode({ messages: [{ role: 'user', content: 'x' }], thinking: { type: 'enabled', budget_tokens: 2048, display: 'omitted' } }).thinking, { type: 'enabled', budget_tokens: 2048, display: 'omitted' });
  assert.deepEqual(decode({ messages: [{ role: 'user', content: 'x' }], thinking: { type: 'between_tools' } }).thinking, { type: 'adaptive' });
  assert.equal(decode({ messages: [{ role: 'user', content: 'x' }], output_config: { effort: 'max' } }).reasoning_effort, 'max');
  refused({ messages: [{ role: 'user', content: 'x' }], thinking: { type: 'adaptive', display: 'full' } }, 'thinking.display');
  refused({ messages: [{ role: 'user', content: 'x' }], output_config: { effort: 'extreme' } }, 'output_config.effort');
  refused({ messages: [{ role: 'user', content: 'x' }], output_config: { format: { type: 'regex' } } }, 'output_config.format.type');
  refused({ messages: [{ role: 'user', content: 'x' }], context_management: { edits: [{ keep: 1 }] } }, 'context_management.edits[0].type');
});

/** A tool loop: n calls and their results, each result `size` characters. */
function loop(n: number, size: number): Message[] {
  const out: Message[] = [{ role: 'user', content: [{ type: 'text', text: 'go' }] }];
  for (let i = 0; i < n; i++) {
    out.push({ role: 'assistant', content: [{ type: 'thinking', thinking: `t${i}`, signature: `s${i}` }, { type: 'tool_use', id: `c${i}`, name: i === 0 ? 'keep_me' : 'read', input: { path: `/f${i}` } }] });
    out.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `c${i}`, content: [{ type: 'text', text: 'x'.repeat(size) }] }] });
  }
  return out;
}
const req = (messages: Message[], edits: unknown[]): CanonicalRequest =>
  ({ model: 'm', system: [], messages, stream: false, context_management: { edits }, context_edits: parseContextEdits({ edits }) });
const results = (ms: Message[]): string[] => ms.flatMap((m) => m.content.flatMap((b) => (b.type === 'tool_result' ? [(b.content[0] as { text: string }).text.slice(0, 40)] : [])));

test('clear_tool_uses: trigger, keep, exclude_tools, clear_tool_inputs, clear_at_least; the request itself is untouched', () => {
  const r = req(loop(5, 100), [{ type: 'clear_tool_uses_20250919', trigger: { type: 'tool_uses', value: 3 }, keep: { type: 'tool_uses', value: 2 }, exclude_tools: ['keep_me'], clear_tool_inputs: ['read'] }]);
  const out = applyContextEdits(r);
  assert.deepEqual(results(out.messages), ['x'.repeat(40), CLEARED_RESULT, CLEARED_RESULT, 'x'.repeat(40), 'x'.repeat(40)]);
  const inputs = out.messages.flatMap((m) => m.content.flatMap((b) => (b.type === 'tool_use' ? [b.input] : [])));
  assert.deepEqual(inputs, [{ path: '/f0' }, {}, {}, { path: '/f3' }, { path: '/f4' }]);
  assert.deepEqual(out.adjustments, ['context_management.edits[0]=clear_tool_uses(applied by gateway: 2 results)']);
  assert.equal(results(r.messages)[1], 'x'.repeat(40), 'the canonical request (reused for fallbacks) is not changed');
  // Under the trigger nothing happens; clear_at_least above what clearing frees keeps everything.
  assert.deepEqual(results(applyContextEdits(req(loop(2, 100), [{ type: 'clear_tool_uses_20250919', trigger: { type: 'tool_uses', value: 3 } }])).messages).length, 2);
  const tooLittle = applyContextEdits(req(loop(5, 100), [{ type: 'clear_tool_uses_20250919', trigger: { type: 'tool_uses', value: 1 }, keep: { type: 'tool_uses', value: 1 }, clear_at_least: { type: 'input_tokens', value: 5000 } }]));
  assert.ok(!results(tooLittle.messages).includes(CLEARED_RESULT));
  // The default trigger is 100 000 input tokens (estimated at 4 characters each).
  const big = applyContextEdits(req(loop(5, 100_000), [{ type: 'clear_tool_uses_20250919' }]));
  assert.deepEqual(results(big.messages).filter((t) => t === CLEARED_RESULT).length, 2);
});

test('clear_thinking keeps the last turns asked for; compaction is dropped (it needs the model)', () => {
  const thinking = (ms: Message[]): number => ms.filter((m) => m.content.some((b) => b.type === 'thinking')).length;
  assert.equal(thinking(applyContextEdits(req(loop(4, 10), [{ type: 'clear_thinking_20251015', keep: { type: 'thinking_turns', value: 1 } }])).messages), 1);
  assert.equal(thinking(applyContextEdits(req(loop(4, 10), [{ type: 'clear_thinking_20251015', keep: 'all' }])).messages), 4);
  assert.equal(thinking(applyContextEdits(req(loop(4, 10), [{ type: 'clear_thinking_20251015' }])).messages), 1);
  const compact = applyContextEdits(req(loop(1, 10), [{ type: 'compact_20260112' }]));
  assert.deepEqual(compact.adjustments, ['context_management.edits[0]=compact_20260112(dropped: needs server-side context)']);
});
