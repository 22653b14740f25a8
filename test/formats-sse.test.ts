// Tests for the shared SSE framer: grammar corner cases and byte-boundary independence.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSseParser, sseFrame, type SseFrame } from '../src/formats/sse.ts';

const enc = new TextEncoder();

function parseAll(text: string): SseFrame[] {
  const p = createSseParser();
  return [...p.push(enc.encode(text)), ...p.end()];
}

/** Parse the bytes cut into two pieces at every possible offset. */
function parseSplitEverywhere(bytes: Uint8Array): SseFrame[][] {
  const results: SseFrame[][] = [];
  for (let cut = 0; cut <= bytes.length; cut++) {
    const p = createSseParser();
    results.push([...p.push(bytes.subarray(0, cut)), ...p.push(bytes.subarray(cut)), ...p.end()]);
  }
  return results;
}

test('parses events, data joining, comments and id', () => {
  const frames = parseAll(': keep-alive\n\nevent: ping\ndata: {"a":1}\n\ndata: line1\ndata:line2\nid: 7\n\n');
  assert.deepEqual(frames, [
    { event: 'ping', data: '{"a":1}' },
    { data: 'line1\nline2', id: '7' },
  ]);
});

test('all three line endings are accepted', () => {
  assert.deepEqual(parseAll('data: a\r\n\r\ndata: b\r\rdata: c\n\n'), [{ data: 'a' }, { data: 'b' }, { data: 'c' }]);
});

test('event fields without data are dropped; empty data line yields empty string', () => {
  assert.deepEqual(parseAll('event: x\n\ndata\n\n'), [{ data: '' }]);
});

test('a final event without the closing blank line is flushed by end()', () => {
  const p = createSseParser();
  assert.deepEqual(p.push(enc.encode('data: [DONE]')), []);
  assert.deepEqual(p.end(), [{ data: '[DONE]' }]);
});

test('identical frames at every byte boundary, including inside UTF-8 and CRLF', () => {
  const text = 'event: content_block_delta\r\ndata: {"text":"héllo 世界 🎉"}\r\n\r\n:ping\r\ndata: done\r\n\r\n';
  const bytes = enc.encode(text);
  const expected = parseAll(text);
  assert.equal(expected.length, 2);
  assert.equal(expected[0]!.data, '{"text":"héllo 世界 🎉"}');
  for (const got of parseSplitEverywhere(bytes)) assert.deepEqual(got, expected);
  // And one byte at a time.
  const p = createSseParser();
  const one: SseFrame[] = [];
  for (const b of bytes) one.push(...p.push(Uint8Array.of(b)));
  one.push(...p.end());
  assert.deepEqual(one, expected);
});

test('a CR at a chunk end followed by LF is one line break, not two', () => {
  const p = createSseParser();
  const out = [...p.push(enc.encode('data: a\r')), ...p.push(enc.encode('\ndata: b\r')), ...p.push(enc.encode('\n\r\n'))];
  assert.deepEqual(out, [{ data: 'a\nb' }]);
});

test('writer output parses back to the same frame', () => {
  assert.equal(sseFrame('{"x":1}', 'message_start'), 'event: message_start\ndata: {"x":1}\n\n');
  assert.equal(sseFrame('[DONE]'), 'data: [DONE]\n\n');
  assert.deepEqual(parseAll(sseFrame('a\nb', 'e')), [{ event: 'e', data: 'a\nb' }]);
});

test('a long data line arriving in many small chunks is reassembled exactly', () => {
  const payload = JSON.stringify({ data: 'x'.repeat(200_000) + 'é'.repeat(1000) });
  const bytes = enc.encode(`data: ${payload}\r\n\r\n`);
  const p = createSseParser();
  const out: SseFrame[] = [];
  for (let i = 0; i < bytes.length; i += 97) out.push(...p.push(bytes.subarray(i, i + 97)));
  out.push(...p.end());
  assert.equal(out.length, 1);
  assert.equal(out[0]!.data, payload);
});

test('LF-only and CR line endings mixed in one stream give the same frames at every split, in two and three pieces', () => {
  const text = 'data: {"a":1}\n\nevent: x\ndata: two\ndata: lines\n\n: keep-alive\ndata:no-space\r\n\r\ndata: é\rdata: 世\n\nid: 7\ndata: last\n\n';
  const bytes = enc.encode(text);
  const expected = parseAll(text);
  assert.deepEqual(expected, [
    { data: '{"a":1}' }, { data: 'two\nlines', event: 'x' }, { data: 'no-space' }, { data: 'é\n世' }, { data: 'last', id: '7' },
  ]);
  for (const got of parseSplitEverywhere(bytes)) assert.deepEqual(got, expected);
  for (let a = 0; a <= bytes.length; a += 3) {
    for (let b = a; b <= bytes.length; b += 5) {
      const p = createSseParser();
      const got = [...p.push(bytes.subarray(0, a)), ...p.push(bytes.subarray(a, b)), ...p.push(bytes.subarray(b)), ...p.end()];
      assert.deepEqual(got, expected);
    }
  }
});

test('the writer splits multi-line data and leaves single-line data whole', () => {
  assert.equal(sseFrame('{"a":1}'), 'data: {"a":1}\n\n');
  assert.equal(sseFrame('x', 'ping'), 'event: ping\ndata: x\n\n');
  assert.equal(sseFrame('a\r\nb\rc\nd'), 'data: a\ndata: b\ndata: c\ndata: d\n\n');
});
