// Upstream text in a charset other than UTF-8 is recoded to UTF-8 as it arrives (src/engine/charset.ts),
// cut anywhere; a byte order mark picks the encoding and is dropped; a label nobody knows is read as UTF-8.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bodyText, createRecoder, declaredCharset, isTextType, utf8ContentType } from '../src/engine/charset.ts';
import { BOM, encodeText } from './mocks/charsets.ts';

test('the charset a Content-Type declares: null for none and for UTF-8 (read as it is)', () => {
  for (const ct of [undefined, 'application/json', 'text/event-stream', 'application/json; charset=utf-8', 'application/json;charset="UTF-8"', 'text/event-stream; Charset=utf8', 'application/json; charset=']) {
    assert.equal(declaredCharset(ct), null, String(ct));
  }
  assert.equal(declaredCharset('application/json; charset=ISO-8859-1'), 'iso-8859-1');
  assert.equal(declaredCharset('application/json;charset="Shift_JIS"; foo=bar'), 'shift_jis');
  assert.equal(declaredCharset(['text/event-stream; charset = utf-16le']), 'utf-16le');
  assert.equal(utf8ContentType('application/json; charset="Shift_JIS"; foo=bar'), 'application/json; charset=utf-8; foo=bar');
  assert.equal(isTextType('application/vnd.amazon.eventstream'), false);
  assert.equal(isTextType('application/octet-stream'), false);
  assert.equal(isTextType('application/problem+json'), true);
});

const TEXT = 'Grüße, “Café” déjà — 日本語こんにちは 🎉';
const LATIN = 'Grüße, “Café” déjà — ½';

const cases: Array<{ label: string | null; bytes: Buffer; text: string }> = [
  { label: 'iso-8859-1', bytes: encodeText(LATIN, 'windows-1252'), text: LATIN },
  { label: 'windows-1252', bytes: encodeText(LATIN, 'windows-1252'), text: LATIN },
  { label: 'shift_jis', bytes: encodeText('日本語こんにちは、ｶﾀｶﾅ', 'shift_jis'), text: '日本語こんにちは、ｶﾀｶﾅ' },
  { label: 'utf-16le', bytes: encodeText(TEXT, 'utf-16le'), text: TEXT },
  { label: 'utf-16', bytes: Buffer.concat([BOM['utf-16le'], encodeText(TEXT, 'utf-16le')]), text: TEXT },
  // A BOM overrides the label, as browsers read it.
  { label: 'utf-16le', bytes: Buffer.concat([BOM['utf-16be'], encodeText(TEXT, 'utf-16be')]), text: TEXT },
  { label: 'iso-8859-1', bytes: Buffer.concat([BOM['utf-8'], encodeText(TEXT, 'utf-8')]), text: TEXT },
  { label: null, bytes: Buffer.concat([BOM['utf-8'], encodeText(TEXT, 'utf-8')]), text: TEXT },
  { label: null, bytes: Buffer.concat([BOM['utf-16le'], encodeText(TEXT, 'utf-16le')]), text: TEXT },
];

test('a body recoded to UTF-8 is the same text wherever its chunks are cut (in a character, in the BOM)', () => {
  for (const c of cases) {
    for (let a = 0; a <= c.bytes.length; a++) {
      for (const b of [a, Math.min(c.bytes.length, a + 1), Math.min(c.bytes.length, a + 3)]) {
        const r = createRecoder(c.label, 'test');
        const out = Buffer.concat([r.push(c.bytes.subarray(0, a)), r.push(c.bytes.subarray(a, b)), r.push(c.bytes.subarray(b)), r.end()]);
        assert.equal(out.toString('utf8'), c.text, `${c.label} cut at ${a}/${b}`);
      }
    }
  }
});

test('an unknown charset label is read as UTF-8, and a whole body is read in its declared charset', () => {
  const warned: string[] = [];
  const warn = console.warn;
  console.warn = (line: string) => { warned.push(line); };
  try {
    const r = createRecoder('x-no-such-charset', 'http://127.0.0.1:9');
    assert.equal(Buffer.concat([r.push(Buffer.from(TEXT)), r.end()]).toString('utf8'), TEXT);
  } finally { console.warn = warn; }
  assert.deepEqual(warned, ['upstream http://127.0.0.1:9: answered in charset "x-no-such-charset", which the gateway does not know: read as UTF-8']);
  assert.equal(bodyText(encodeText('Modèle inconnu', 'windows-1252'), 'application/json; charset=latin1', 'test'), 'Modèle inconnu');
  assert.equal(bodyText(Buffer.concat([BOM['utf-8'], Buffer.from('{"a":1}')]), 'application/json', 'test'), '{"a":1}');
  // A binary type's bytes are not recoded.
  assert.equal(bodyText(Buffer.from([0xff, 0xfe, 0x41, 0x00]), 'application/octet-stream', 'test'), Buffer.from([0xff, 0xfe, 0x41, 0x00]).toString('utf8'));
  // An empty body, and one that is only a partial BOM.
  const e = createRecoder(null, 'test');
  assert.equal(Buffer.concat([e.push(Buffer.alloc(0)), e.end()]).length, 0);
  const p = createRecoder(null, 'test');
  assert.equal(Buffer.concat([p.push(Buffer.from([0xef, 0xbb])), p.end()]).toString('utf8'), '\ufffd');
});
