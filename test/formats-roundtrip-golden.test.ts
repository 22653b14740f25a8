// Table-driven golden tests: every JSON fixture under test/fixtures/formats/<format>/ is an
// {in, out} pair for one codec direction; recorded streams are also replayed cut at every byte.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Codec, StreamDecoder } from '../src/formats/codec.ts';
import type { StreamEvent } from '../src/formats/canonical.ts';
import { openaiChatCodec, validateChatRequest } from '../src/formats/openai-chat/index.ts';
import { anthropicMessagesCodec, validateMessagesRequest } from '../src/formats/anthropic-messages/index.ts';

type Fixture = { description: string; kind: string; in: unknown; out: unknown; includeUsage?: boolean };

const codecs: Record<string, { codec: Codec; validate: (b: unknown) => Record<string, unknown> }> = {
  'openai-chat': { codec: openaiChatCodec, validate: validateChatRequest },
  'anthropic-messages': { codec: anthropicMessagesCodec, validate: validateMessagesRequest },
};
const root = join(import.meta.dirname, 'fixtures', 'formats');
const enc = new TextEncoder();
// `created` is the wall clock; fixtures record it as 0.
const normalize = (s: string): string => s.replace(/"created":\d+/g, '"created":0');

function decodeAll(d: StreamDecoder, pieces: Uint8Array[]): StreamEvent[] {
  return [...pieces.flatMap((p) => d.push(p)), ...d.end()];
}

function run(format: string, f: Fixture): unknown {
  const { codec, validate } = codecs[format]!;
  const input = structuredClone(f.in) as never;
  switch (f.kind) {
    case 'client-request': return codec.client!.decodeRequest(validate(input));
    case 'upstream-request': {
      const { request, target } = f.in as { request: never; target: never };
      return codec.upstream.encodeRequest(structuredClone(request), target);
    }
    case 'upstream-response': return codec.upstream.decodeResponse(input);
    case 'client-response': return JSON.parse(normalize(JSON.stringify(codec.client!.encodeResponse(input))));
    case 'upstream-error': {
      const { status, body } = f.in as { status: number; body: unknown };
      return codec.upstream.decodeError(status, typeof body === 'string' ? body : JSON.stringify(body));
    }
    case 'upstream-stream': {
      const events = decodeAll(codec.upstream.newStreamDecoder(), [enc.encode((f.in as string[]).join('\n'))]);
      const out: Record<string, unknown> = { events };
      for (const [name, c] of Object.entries(codecs)) {
        const e = c.codec.client!.newStreamEncoder({ includeUsage: f.includeUsage ?? true });
        out[name] = normalize(events.map((ev) => e.encode(ev)).join('') + e.end()).split('\n');
      }
      return out;
    }
    default: throw new Error(`unknown fixture kind ${f.kind}`);
  }
}

for (const format of Object.keys(codecs)) {
  const files = readdirSync(join(root, format)).filter((n) => n.endsWith('.json')).sort();
  test(`${format}: fixtures exist for every direction`, () => {
    const kinds = new Set(files.map((n) => (JSON.parse(readFileSync(join(root, format, n), 'utf8')) as Fixture).kind));
    assert.deepEqual([...kinds].sort(), ['client-request', 'client-response', 'upstream-error', 'upstream-request', 'upstream-response', 'upstream-stream']);
  });
  for (const name of files) {
    const f = JSON.parse(readFileSync(join(root, format, name), 'utf8')) as Fixture;
    test(`${format}/${name}: ${f.description}`, () => {
      assert.deepEqual(run(format, f), f.out);
    });
    if (f.kind !== 'upstream-stream') continue;
    test(`${format}/${name}: identical events at every byte boundary`, () => {
      const bytes = enc.encode((f.in as string[]).join('\n'));
      const expected = (f.out as { events: StreamEvent[] }).events;
      const d = (): StreamDecoder => codecs[format]!.codec.upstream.newStreamDecoder();
      for (let cut = 0; cut <= bytes.length; cut++) {
        assert.deepEqual(decodeAll(d(), [bytes.subarray(0, cut), bytes.subarray(cut)]), expected, `cut at byte ${cut}`);
      }
      assert.deepEqual(decodeAll(d(), [...bytes].map((b) => Uint8Array.of(b))), expected, 'one byte at a time');
    });
  }
}
