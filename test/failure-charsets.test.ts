// An upstream that answers in a charset other than UTF-8 (a Content-Type `charset=iso-8859-1`,
// `windows-1252`, `shift_jis`, `utf-16` with a BOM) or with a UTF-8 byte order mark is read in that
// charset: JSON answers, streams cut inside a character, error bodies, on translating, same-format and
// pass-through routes. Before, every body was read as UTF-8: non-ASCII text came out as U+FFFD, UTF-16
// and BOM-led JSON did not parse (a 502), and the pass-through stream relabelled nothing, sending
// UTF-8 under the upstream's `charset=iso-8859-1`.
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRawUpstream, type RawUpstream } from './helpers/raw-upstream.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { recordOf, settled } from './helpers/records.ts';
import { BOM, encodeText } from './mocks/charsets.ts';

let up: RawUpstream; let gw: TestGateway;

before(async () => {
  up = await startRawUpstream();
  gw = await startTestGateway({
    providers: [
      { id: 'oa', format: 'openai-chat', base_url: `${up.url}/v1`, models: [{ name: 'test-model', pricing: { prompt: '0.000001', completion: '0.000002' } }, { name: 'emb', pricing: { prompt: '0.000001', completion: '0' } }] },
      { id: 'an', format: 'anthropic-messages', base_url: `${up.url}/v1` },
    ],
    gateway: { upstream: { first_byte_timeout_ms: 3000, idle_timeout_ms: 3000, max_attempts: 1, ejection: { consecutive_failures: 1000 } } },
  });
});
after(async () => { await gw.stop(); await up.close(); });
beforeEach(() => up.reset());

/** How each case's answer is sent: the content-type's charset (none: no parameter), the encoding, a BOM. */
type Case = { name: string; charset: string | null; encoding: string; bom?: keyof typeof BOM; text: string };
const LATIN = 'Grüße, “Café” à bientôt — ½';
const CASES: Case[] = [
  { name: 'ISO-8859-1', charset: 'ISO-8859-1', encoding: 'windows-1252', text: 'Grüße, Café à bientôt ½ ñ' },
  { name: 'windows-1252', charset: 'windows-1252', encoding: 'windows-1252', text: LATIN },
  { name: 'Shift_JIS', charset: 'Shift_JIS', encoding: 'shift_jis', text: '日本語のこんにちは、ｶﾀｶﾅ' },
  { name: 'UTF-16LE with a BOM', charset: 'utf-16', encoding: 'utf-16le', bom: 'utf-16le', text: `${LATIN} 日本語 🎉` },
  { name: 'UTF-16LE without one', charset: 'utf-16le', encoding: 'utf-16le', text: `${LATIN} 日本語 🎉` },
  { name: 'UTF-8 with a BOM', charset: null, encoding: 'utf-8', bom: 'utf-8', text: `${LATIN} 日本語 🎉` },
  { name: 'an unknown label (read as UTF-8)', charset: 'x-no-such-charset', encoding: 'utf-8', text: `${LATIN} 日本語` },
];

const contentType = (base: string, c: Case): string => (c.charset === null ? base : `${base}; charset=${c.charset}`);
const encode = (text: string, c: Case): Buffer => Buffer.concat([c.bom ? BOM[c.bom] : Buffer.alloc(0), encodeText(text, c.encoding)]);

/** `body` cut in two inside the encoding of the first non-ASCII character of `text` (its second byte on). */
function cutInside(text: string, c: Case): Buffer[] {
  const body = encode(text, c);
  const at = [...text].findIndex((ch) => ch.charCodeAt(0) > 0x7f);
  const prefix = encode([...text].slice(0, at).join(''), c).length;
  return [body.subarray(0, prefix + 1), body.subarray(prefix + 1)];
}

/** What a client reads: the body decoded in the charset its content-type names (UTF-8 when none). */
async function clientText(r: Response): Promise<string> {
  const label = /charset\s*=\s*"?([^";\s]+)/i.exec(r.headers.get('content-type') ?? '')?.[1] ?? 'utf-8';
  return new TextDecoder(label).decode(await r.arrayBuffer());
}

const CLIENTS = {
  messages: { path: '/v1/messages', body: (stream: boolean) => ({ model: 'oa/test-model', stream, max_tokens: 64, messages: [{ role: 'user', content: 'hello' }] }) },
  chat: { path: '/v1/chat/completions', body: (stream: boolean) => ({ model: 'oa/test-model', stream, messages: [{ role: 'user', content: 'hello' }] }) },
} as const;

async function ask(client: keyof typeof CLIENTS, stream: boolean) {
  const c = CLIENTS[client];
  const r = await fetch(`${gw.url}${c.path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, signal: AbortSignal.timeout(10_000), body: JSON.stringify(c.body(stream)) });
  const text = await clientText(r);
  assert.equal(await settled(gw), 0, 'nothing left in flight');
  return { r, text, rec: await recordOf(gw, r.headers.get('x-inference-id')!) };
}

/** The answer's text in either client format, whole or streamed. */
function answerText(client: keyof typeof CLIENTS, stream: boolean, body: string): string {
  if (!stream) {
    const j = JSON.parse(body) as { content?: Array<{ text: string }>; choices?: Array<{ message: { content: string } }> };
    return client === 'messages' ? j.content!.map((b) => b.text).join('') : j.choices![0]!.message.content;
  }
  let out = '';
  for (const line of body.split('\n')) {
    if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
    const j = JSON.parse(line.slice(6)) as { delta?: { text?: string }; choices?: Array<{ delta?: { content?: string } }> };
    out += client === 'messages' ? j.delta?.text ?? '' : j.choices?.[0]?.delta?.content ?? '';
  }
  return out;
}

const chatJson = (text: string): string => JSON.stringify({
  id: 'chatcmpl-cs', object: 'chat.completion', created: 1, model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 },
});

const chatStream = (text: string): string => {
  const chunk = (delta: Record<string, unknown>, finish: string | null, extra: Record<string, unknown> = {}) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-cs', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;
  return chunk({ role: 'assistant', content: '' }, null) + chunk({ content: text }, null) + chunk({}, 'stop')
    + `data: ${JSON.stringify({ id: 'chatcmpl-cs', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage: { prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 } })}\n\ndata: [DONE]\n\n`;
};

test('a JSON answer in its declared charset reaches the client as its text (a Messages client translated, a chat client same-format)', async () => {
  for (const c of CASES) {
    for (const client of ['messages', 'chat'] as const) {
      up.push({ headers: { 'content-type': contentType('application/json', c) }, chunks: [encode(chatJson(c.text), c)] });
      const { r, text, rec } = await ask(client, false);
      assert.equal(r.status, 200, `${c.name}, ${client}: ${text}`);
      assert.equal(answerText(client, false, text), c.text, `${c.name}, ${client}`);
      assert.deepEqual([rec.status, rec.inputTokens, rec.outputTokens], [200, 11, 3], `${c.name}, ${client}`);
    }
  }
});

test('a stream in its declared charset, cut inside a character between two writes, reaches the client as its text', async () => {
  for (const c of CASES) {
    for (const client of ['messages', 'chat'] as const) {
      up.push({ headers: { 'content-type': contentType('text/event-stream', c) }, chunks: cutInside(chatStream(c.text), c), gapMs: 30 });
      const { r, text, rec } = await ask(client, true);
      assert.equal(r.status, 200, `${c.name}, ${client}: ${text}`);
      assert.match(r.headers.get('content-type') ?? '', /charset=utf-8/);
      assert.equal(answerText(client, true, text), c.text, `${c.name}, ${client}`);
      assert.deepEqual([rec.status, rec.inputTokens, rec.outputTokens, rec.partial ?? false], [200, 11, 3, false], `${c.name}, ${client}`);
    }
  }
});

test('an error answer in another charset is quoted right in the gateway\'s error, in each client\'s envelope', async () => {
  for (const c of CASES) {
    const message = `Refused: ${c.text}`;
    up.push({ status: 400, headers: { 'content-type': contentType('application/json', c) }, chunks: [encode(JSON.stringify({ error: { message, type: 'invalid_request_error' } }), c)] });
    const m = await ask('messages', false);
    assert.equal(m.r.status, 400, `${c.name}: ${m.text}`);
    assert.equal((JSON.parse(m.text) as { type: string; error: { message: string } }).error.message, `OA: ${message}`, c.name);
    up.push({ status: 429, headers: { 'content-type': contentType('application/json', c) }, chunks: cutInside(JSON.stringify({ error: { message, type: 'rate_limit' } }), c), gapMs: 20 });
    const o = await ask('chat', true);
    assert.equal(o.r.status, 429, `${c.name}: ${o.text}`);
    assert.equal((JSON.parse(o.text) as { error: { message: string } }).error.message, `OA: ${message}`, c.name);
  }
});

test('pass-through: a JSON answer goes out byte for byte under its own charset and is billed; a stream is relabelled UTF-8', async () => {
  const c = CASES.find((x) => x.name === 'UTF-16LE with a BOM')!;
  const emb = JSON.stringify({ object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0.5] }], model: 'emb', usage: { prompt_tokens: 9, total_tokens: 9 }, note: c.text });
  up.push({ headers: { 'content-type': contentType('application/json', c) }, chunks: [encode(emb, c)] });
  const r = await fetch(`${gw.url}/v1/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'oa/emb', input: 'hello' }) });
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('content-type'), 'application/json; charset=utf-16');
  assert.equal((JSON.parse(await clientText(r)) as { note: string }).note, c.text);
  const rec = await recordOf(gw, r.headers.get('x-inference-id')!);
  assert.deepEqual([rec.status, rec.inputTokens], [200, 9], 'billed from the usage it reported');

  for (const s of CASES.filter((x) => x.charset !== null && x.encoding !== 'utf-8')) {
    const chunk = (extra: Record<string, unknown>) => `data: ${JSON.stringify({ id: 'cmpl-cs', object: 'text_completion', created: 1, model: 'm', ...extra })}\n\n`;
    const stream = chunk({ choices: [{ index: 0, text: s.text, finish_reason: null }] }) + chunk({ choices: [{ index: 0, text: '', finish_reason: 'stop' }] })
      + chunk({ choices: [], usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } }) + 'data: [DONE]\n\n';
    up.push({ headers: { 'content-type': contentType('text/event-stream', s) }, chunks: cutInside(stream, s), gapMs: 30 });
    const sr = await fetch(`${gw.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'oa/test-model', prompt: 'hi', stream: true, stream_options: { include_usage: true } }) });
    assert.equal(sr.status, 200);
    assert.match(sr.headers.get('content-type') ?? '', /charset=utf-8/, s.name);
    const body = await clientText(sr);
    const texts = body.split('\n').filter((l) => l.startsWith('data: {')).map((l) => (JSON.parse(l.slice(6)) as { choices: Array<{ text: string }> }).choices[0]?.text ?? '').join('');
    assert.equal(texts, s.text, s.name);
    const srec = await recordOf(gw, sr.headers.get('x-inference-id')!);
    assert.deepEqual([srec.status, srec.inputTokens, srec.outputTokens, srec.partial ?? false], [200, 5, 2, false], s.name);
  }

  const e = CASES.find((x) => x.name === 'ISO-8859-1')!;
  up.push({ status: 400, headers: { 'content-type': contentType('application/json', e) }, chunks: [encode(JSON.stringify({ error: { message: `Entrée refusée: ${e.text}`, type: 'invalid_request_error' } }), e)] });
  const bad = await fetch(`${gw.url}/v1/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'oa/emb', input: 'hello' }) });
  assert.equal(bad.status, 400);
  assert.equal((await bad.json() as { error: { message: string } }).error.message, `OA: Entrée refusée: ${e.text}`);
});

test('pass-through: a JSON answer whose byte order mark contradicts its label goes out labelled by the BOM (the BOM wins) and is billed', async () => {
  // Before, `charset=utf-8` over UTF-16 bytes went out as it came: a client decoding by the label read mojibake.
  const cases: Array<{ ct: string; bom: keyof typeof BOM; encoding: string; want: string; chunks?: 'split' }> = [
    { ct: 'application/json; charset=utf-8', bom: 'utf-16le', encoding: 'utf-16le', want: 'application/json; charset=utf-16le' },
    { ct: 'application/json;charset="UTF-8"', bom: 'utf-16be', encoding: 'utf-16be', want: 'application/json;charset=utf-16be', chunks: 'split' },
    { ct: 'application/json', bom: 'utf-16le', encoding: 'utf-16le', want: 'application/json; charset=utf-16le' },
    { ct: 'application/json; charset=iso-8859-1', bom: 'utf-8', encoding: 'utf-8', want: 'application/json; charset=utf-8' },
    // A BOM that agrees with the label (or a UTF-8 one under no label) changes nothing.
    { ct: 'application/json; charset=utf-16', bom: 'utf-16le', encoding: 'utf-16le', want: 'application/json; charset=utf-16' },
    { ct: 'application/json', bom: 'utf-8', encoding: 'utf-8', want: 'application/json' },
  ];
  for (const c of cases) {
    const text = `${LATIN} 日本語 🎉`;
    const emb = JSON.stringify({ object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0.5] }], model: 'emb', usage: { prompt_tokens: 9, total_tokens: 9 }, note: text });
    const body = Buffer.concat([BOM[c.bom], encodeText(emb, c.encoding)]);
    // Split: the first chunk holds one byte of the BOM, so the label is decided on the bytes that follow.
    up.push({ headers: { 'content-type': c.ct }, chunks: c.chunks === 'split' ? [body.subarray(0, 1), body.subarray(1)] : [body], gapMs: 20 });
    const r = await fetch(`${gw.url}/v1/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'oa/emb', input: 'hello' }) });
    assert.equal(r.status, 200, c.ct);
    assert.equal(r.headers.get('content-type'), c.want, c.ct);
    const bytes = Buffer.from(await r.arrayBuffer());
    assert.ok(bytes.equals(body), `${c.ct}: the bytes go out as they came`);
    assert.equal((JSON.parse(new TextDecoder(/charset\s*=\s*"?([^";\s]+)/i.exec(c.want)?.[1] ?? 'utf-8').decode(bytes)) as { note: string }).note, text, c.ct);
    const rec = await recordOf(gw, r.headers.get('x-inference-id')!);
    assert.deepEqual([rec.status, rec.inputTokens], [200, 9], `${c.ct}: billed from the usage it reported`);
  }
});

test('a JSON exchange outside the attempt flow (count_tokens) reads its answer and its error in their charset', async () => {
  const count = (): Promise<Response> => fetch(`${gw.url}/v1/messages/count_tokens`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'an/test-model', messages: [{ role: 'user', content: 'hello' }] }) });
  const u = CASES.find((x) => x.name === 'UTF-16LE with a BOM')!;
  up.push({ headers: { 'content-type': contentType('application/json', u) }, chunks: [encode(JSON.stringify({ input_tokens: 4242 }), u)] });
  const r = await count();
  assert.equal(r.headers.get('x-gateway-token-count'), 'provider', 'the provider\'s own count, not the estimate it fell back to');
  assert.deepEqual(await r.json(), { input_tokens: 4242 });

  const j = CASES.find((x) => x.name === 'Shift_JIS')!;
  up.push({ status: 400, headers: { 'content-type': contentType('application/json', j) }, chunks: cutInside(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: j.text } }), j), gapMs: 20 });
  const bad = await count();
  assert.equal(bad.status, 400);
  assert.equal((await bad.json() as { error: { message: string } }).error.message, `AN: ${j.text}`);
});
