// The signature mark (src/formats/signatures.ts) on its own: it reads back what it wrote (model ids
// with ':' and '.' included), a streamed signature marked on its first piece concatenates to the
// marked whole, and each target takes only its own signer's signatures.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StreamEvent } from '../src/formats/canonical.ts';
import { markSignature, qualifySignature, readSignature, signatureFor, streamMarker } from '../src/formats/signatures.ts';

test('a mark reads back: family, model (any characters), raw value; unmarked or malformed has no signer', () => {
  for (const model of ['gemini-3-pro-preview', 'anthropic.claude-opus-4-8-v1:0', 'models/a:b%c']) {
    const sig = markSignature('Ab+/=:x', { family: 'gemini', model });
    assert.deepEqual(readSignature(sig), { signer: { family: 'gemini', model }, raw: 'Ab+/=:x' });
  }
  assert.deepEqual(readSignature(markSignature('EqQ', { family: 'anthropic' })), { signer: { family: 'anthropic' }, raw: 'EqQ' });
  assert.deepEqual(readSignature('EqQ'), { signer: null, raw: 'EqQ' });
  assert.deepEqual(readSignature('gwsig1:openai::x'), { signer: null, raw: 'gwsig1:openai::x' });
  assert.equal(qualifySignature('EqQ', 'anthropic'), 'gwsig1:anthropic::EqQ');
  assert.equal(qualifySignature('gwsig1:gemini:m:S', 'anthropic'), 'gwsig1:gemini:m:S', 'a marked one keeps its signer');
  assert.equal(qualifySignature('', 'anthropic'), '');
});

test('targets take their own signer\'s signatures only; a Gemini one without a model goes to any Gemini model', () => {
  const claude = { family: 'anthropic' } as const;
  assert.equal(signatureFor('gwsig1:anthropic::S', claude), 'S');
  assert.equal(signatureFor('gwsig1:gemini:a:S', claude), null);
  assert.equal(signatureFor('S', claude), null, 'no known signer');
  assert.equal(signatureFor('gwsig1:gemini:a:S', { family: 'gemini', model: 'a' }), 'S');
  assert.equal(signatureFor('gwsig1:gemini:a:S', { family: 'gemini', model: 'b' }), null);
  assert.equal(signatureFor('gwsig1:gemini::S', { family: 'gemini', model: 'b' }), 'S');
});

test('a streamed signature is marked on its first piece per block; an Anthropic client gets Claude\'s raw', () => {
  const mark = streamMarker({ family: 'gemini', model: 'm' }, 'anthropic-messages')!;
  const evs: StreamEvent[] = [
    { type: 'block_start', index: 0, block: { type: 'thinking', thinking: '', signature: '' } },
    { type: 'block_delta', index: 0, delta: { type: 'signature_delta', signature: 'AB' } },
    { type: 'block_delta', index: 0, delta: { type: 'signature_delta', signature: 'CD' } },
    { type: 'block_start', index: 1, block: { type: 'thinking', thinking: '', signature: 'EF' } },
  ];
  for (const ev of evs) mark(ev);
  const sig0 = evs.slice(1, 3).map((e) => (e.type === 'block_delta' && e.delta.type === 'signature_delta' ? e.delta.signature : '')).join('');
  assert.equal(sig0, 'gwsig1:gemini:m:ABCD');
  assert.equal((evs[3] as { block: { signature: string } }).block.signature, 'gwsig1:gemini:m:EF');
  assert.equal(streamMarker({ family: 'anthropic' }, 'anthropic-messages'), null);
  assert.notEqual(streamMarker({ family: 'anthropic' }, 'openai-responses'), null);
});
