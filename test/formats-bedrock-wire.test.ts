// AWS wire primitives under Bedrock: event-stream framing (published byte vectors, every header
// type, CRC checks, any byte boundary) and SigV4 (AWS's published signing examples).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { crc32 } from 'node:zlib';
import { createHash } from 'node:crypto';
import { createEventStreamDecoder, encodeEventMessage, EventStreamError } from '../src/formats/bedrock/eventstream.ts';
import { canonicalUri, signSigV4 } from '../src/formats/bedrock/sigv4.ts';

const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);

test('encoder matches a published event-stream frame byte for byte', () => {
  // Vector from the AWS event-stream format examples: payload {"foo": "bar"} without and with a header.
  assert.deepEqual([...encodeEventMessage({}, utf8('{"foo": "bar"}'))],
    [0, 0, 0, 30, 0, 0, 0, 0, 186, 242, 246, 138, 123, 34, 102, 111, 111, 34, 58, 32, 34, 98, 97, 114, 34, 125, 174, 114, 88, 228]);
  const withHeader = encodeEventMessage({ 'content-type': 'application/json' }, utf8('{"foo": "bar"}'));
  assert.equal(withHeader.length, 62);
  assert.deepEqual([...withHeader.subarray(0, 12)], [0, 0, 0, 62, 0, 0, 0, 32, 64, 93, 249, 70]);
  assert.deepEqual([...withHeader.subarray(58)], [111, 162, 191, 59]);
});

test('frames decode identically when cut at every byte boundary', () => {
  const stream = Buffer.concat([
    encodeEventMessage({ ':event-type': 'contentBlockDelta', ':message-type': 'event' }, utf8('{"delta":{"text":"héllo ✓"}}')),
    encodeEventMessage({}, new Uint8Array(0)),
    encodeEventMessage({ ':event-type': 'metadata' }, utf8('{"usage":{}}')),
  ]);
  const whole = createEventStreamDecoder().push(stream);
  assert.equal(whole.length, 3);
  assert.deepEqual(whole[0]!.headers, { ':event-type': 'contentBlockDelta', ':message-type': 'event' });
  assert.equal(new TextDecoder().decode(whole[0]!.payload), '{"delta":{"text":"héllo ✓"}}');
  assert.deepEqual(whole[1], { headers: {}, payload: new Uint8Array(0) });
  for (let a = 1; a < stream.length; a++) {
    for (const b of [a + 1, a + 7, stream.length - 1]) {
      if (b <= a || b >= stream.length) continue;
      const d = createEventStreamDecoder();
      const got = [...d.push(stream.subarray(0, a)), ...d.push(stream.subarray(a, b)), ...d.push(stream.subarray(b))];
      assert.deepEqual(got, whole, `cuts at ${a}, ${b}`);
    }
  }
});

test('headers of every value type decode', () => {
  const h: number[] = [];
  const name = (s: string): void => { h.push(s.length, ...utf8(s)); };
  name('t'); h.push(0);
  name('f'); h.push(1);
  name('b'); h.push(2, 0xff);
  name('s'); h.push(3, 0x01, 0x02);
  name('i'); h.push(4, 0xff, 0xff, 0xff, 0xfe);
  name('l'); h.push(5, 0, 0, 0, 1, 0, 0, 0, 0);
  name('bytes'); h.push(6, 0, 3, 1, 2, 3);
  name('str'); h.push(7, 0, 2, ...utf8('ok'));
  name('ts'); h.push(8, 0, 0, 0x01, 0x4f, 0x7f, 0x1f, 0x9a, 0x00);
  name('id'); h.push(9, ...Array.from({ length: 16 }, (_, i) => i));
  const total = 16 + h.length;
  const frame = new Uint8Array(total);
  const view = new DataView(frame.buffer);
  view.setUint32(0, total); view.setUint32(4, h.length); view.setUint32(8, crc32(frame.subarray(0, 8)));
  frame.set(h, 12);
  view.setUint32(total - 4, crc32(frame.subarray(0, total - 4)));
  const [m] = createEventStreamDecoder().push(frame);
  assert.deepEqual(m!.headers, {
    t: 'true', f: 'false', b: '-1', s: '258', i: '-2', l: '4294967296', bytes: 'AQID', str: 'ok',
    ts: new Date(0x014f7f1f9a00).toISOString(), id: '00010203-0405-0607-0809-0a0b0c0d0e0f',
  });
});

test('CRC corruption in the prelude or the message is detected', () => {
  const frame = encodeEventMessage({ a: 'b' }, utf8('{"x":1}'));
  for (const [at, what] of [[2, 'prelude'], [14, 'message'], [frame.length - 1, 'message']] as const) {
    const bad = Uint8Array.from(frame);
    bad[at]! ^= 0x40;
    assert.throws(() => createEventStreamDecoder().push(bad), (e: unknown) => e instanceof EventStreamError && e.message.includes(what), `byte ${at}`);
  }
});

const EXAMPLE = {
  accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', region: 'us-east-1',
  now: new Date('2015-08-30T12:36:00Z'), body: '', contentSha256Header: false,
};

test('SigV4 reproduces AWS published signatures', () => {
  // AWS Signature Version 4 test suite, get-vanilla and get-vanilla-query-order-key-case.
  assert.deepEqual(signSigV4({ ...EXAMPLE, method: 'GET', url: 'https://example.amazonaws.com/', headers: {}, service: 'service' }), {
    'x-amz-date': '20150830T123600Z',
    authorization: 'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
  });
  assert.match(signSigV4({ ...EXAMPLE, method: 'GET', url: 'https://example.amazonaws.com/?Param2=value2&Param1=value1', headers: {}, service: 'service' }).authorization!,
    /Signature=b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500$/);
  // The IAM ListUsers example from the SigV4 documentation.
  const iam = signSigV4({
    ...EXAMPLE, method: 'GET', url: 'https://iam.amazonaws.com/?Action=ListUsers&Version=2010-05-08', service: 'iam',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded; charset=utf-8' },
  });
  assert.equal(iam.authorization, 'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7');
});

test('SigV4 for Bedrock: double-encoded model ids, payload hash and session token are signed', () => {
  assert.equal(canonicalUri('/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse'), '/model/anthropic.claude-3-haiku-20240307-v1%253A0/converse');
  assert.equal(canonicalUri('/a//b/./c/../d/'), '/a/b/d/');
  assert.equal(canonicalUri('/'), '/');
  const req = {
    ...EXAMPLE, contentSha256Header: true, method: 'POST', service: 'bedrock', sessionToken: 'TOKEN',
    url: 'https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse',
    headers: { 'content-type': 'application/json', 'user-agent': 'gateway/1' }, body: '{"messages":[]}',
  };
  const out = signSigV4(req);
  assert.equal(out['x-amz-content-sha256'], createHash('sha256').update('{"messages":[]}').digest('hex'));
  assert.equal(out['x-amz-security-token'], 'TOKEN');
  assert.match(out.authorization!, /SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date;x-amz-security-token, Signature=[0-9a-f]{64}$/);
  // Deterministic for a fixed clock; any change to the body changes the signature.
  assert.equal(signSigV4(req).authorization, out.authorization);
  assert.notEqual(signSigV4({ ...req, body: '{"messages":[1]}' }).authorization, out.authorization);
});
