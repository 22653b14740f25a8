// countInputImages (src/engine/usage.ts): the images of a body read from its JSON, for a reservation
// whose body the codec cannot decode (every image at the most its model bills: reservation-estimate.ts
// undecodedPrompt), for a pooled body, and for billing a model priced per image. A Responses tool output
// holding images (function_call_output.output: [{ type: 'input_image' }]) was not looked at: 0 images,
// so an undecodable body (a compaction item from an OpenAI server next to it) reserved nothing for them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { countInputImages } from '../src/engine/usage.ts';
import { undecodedPrompt } from '../src/http/reservation-estimate.ts';

const img = { type: 'input_image', image_url: 'https://example.com/a.png' };

test('images in every place a client format holds them are counted, Responses tool outputs included', () => {
  assert.equal(countInputImages({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://e/a.png' } }, { type: 'text', text: 'x' }] }] }), 1);
  assert.equal(countInputImages({ messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'image', source: { type: 'url', url: 'https://e/a.png' } }] }] }] }), 1);
  assert.equal(countInputImages({ input: [{ role: 'user', content: [img] }] }), 1);
  assert.equal(countInputImages({ input: [{ type: 'function_call_output', call_id: 'c', output: [img, img, { type: 'input_text', text: 'x' }] }] }), 2);
  assert.equal(countInputImages({ input: [{ type: 'custom_tool_call_output', call_id: 'c', output: [img] }] }), 1);
  // A string output and items of other types hold none.
  assert.equal(countInputImages({ input: [{ type: 'function_call_output', call_id: 'c', output: 'text' }, { type: 'function_call', call_id: 'c', name: 'f', arguments: '{}', output: [img] }] }), 0);
});

test('an undecodable Responses body reserves its tool outputs\' images', () => {
  const body = { model: 'm', input: [{ type: 'compaction', encrypted_content: 'opaque' }, { type: 'function_call_output', call_id: 'c', output: [img, img, img] }] };
  assert.equal(undecodedPrompt(body).images, 3);
});
