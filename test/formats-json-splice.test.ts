// Splicing the gateway's id and model into an upstream JSON response must give exactly what parsing,
// setting both fields and re-serialising gives (as JSON), or decline (null) so the caller re-serialises.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { replaceTopLevelStrings } from '../src/formats/json-splice.ts';

const ID = '01a1fda7-335c-71a2-8953-d37d7b0b1f27';
const MODEL = 'openai/gpt-4o-mini';

function check(text: string): 'spliced' | 'declined' {
  const json = JSON.parse(text) as Record<string, unknown>;
  const out = replaceTopLevelStrings(text, [['id', json.id, ID], ['model', json.model, MODEL]]);
  if (out === null) return 'declined';
  assert.deepEqual(JSON.parse(out), { ...json, id: ID, model: MODEL }, text);
  return 'spliced';
}

const base = {
  id: 'chatcmpl-abc', object: 'chat.completion', created: 1, model: 'gpt-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content: 'hi', tool_calls: [{ id: 'chatcmpl-abc', type: 'function', function: { name: 'f', arguments: '{"id":"chatcmpl-abc","model":"gpt-4o-mini"}' } }] }, finish_reason: 'tool_calls' }],
  usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
};

test('compact, pretty-printed and reordered responses are spliced to the parsed-and-set result', () => {
  assert.equal(check(JSON.stringify(base)), 'spliced');
  assert.equal(check(JSON.stringify(base, null, 2)), 'spliced');
  assert.equal(check(JSON.stringify(base, null, '\t')), 'spliced');
  const { id, model, ...rest } = base;
  assert.equal(check(JSON.stringify({ ...rest, model, id })), 'spliced', 'nested look-alikes before the top-level members');
  assert.equal(check(JSON.stringify({ model, nested: { id, model }, id })), 'spliced');
  assert.equal(check(`{ "id" :  "chatcmpl-abc" , "model"\n:\n"gpt-4o-mini" }`), 'spliced');
  assert.equal(check(JSON.stringify({ id: 'quote " back \\ é 世', model: 'm' })), 'spliced');
  assert.equal(check(JSON.stringify({ text: '"id":"x"', id: 'x', model: 'm' })), 'spliced', 'a look-alike inside a string value');
});

test('duplicate keys: the last one (what JSON.parse keeps) changes', () => {
  assert.equal(check('{"id":"a","model":"m","id":"a"}'), 'spliced');
  assert.equal(check('{"id":"a","model":"m","id":"b"}'), 'spliced');
});

test('declines what it cannot splice exactly', () => {
  assert.equal(check(JSON.stringify({ model: 'm' })), 'declined', 'no id');
  assert.equal(check(JSON.stringify({ id: 7, model: 'm' })), 'declined', 'id not a string');
  assert.equal(check('{"id":"\\u0061bc","model":"m"}'), 'declined', 'escaped differently than JSON.stringify would');
  assert.equal(check(JSON.stringify({ nested: { id: 'a', model: 'm' } })), 'declined', 'only nested members');
});
