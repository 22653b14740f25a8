// Tests of the Gemini mock upstream: generateContent, streamGenerateContent (SSE and array),
// function calls, thought parts, implicit caching, faults and API-key auth.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startMockGemini } from './mocks/gemini.ts';
import { call, parseSse, readAll, sseJson } from './mocks/client.ts';

const H = { 'x-goog-api-key': 'AIza-test' };
type J = Record<string, any>;
const user = (text: string) => [{ role: 'user', parts: [{ text }] }];
const tools = [{ functionDeclarations: [
  { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { location: { type: 'string' } } } },
  { name: 'get_time', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
] }];

test('gemini mock: generate, stream, tools, thoughts, caching', async (t) => {
  const mock = await startMockGemini();
  t.after(() => mock.close());
  const gen = `${mock.url}/models/gemini-2.5-flash:generateContent`;
  const stream = `${mock.url}/models/gemini-2.5-flash:streamGenerateContent?alt=sse`;

  await t.test('generateContent: candidates, finishReason, usageMetadata, modelVersion', async () => {
    const r = await call(gen, { systemInstruction: { parts: [{ text: 'Be brief.' }] }, contents: user('Hello Gemini friend') }, H);
    assert.equal(r.status, 200);
    const b = r.json as J;
    assert.deepEqual(b.candidates[0].content, { parts: [{ text: 'Echo: Hello Gemini friend' }], role: 'model' });
    assert.equal(b.candidates[0].finishReason, 'STOP');
    assert.equal(b.modelVersion, 'gemini-2.5-flash');
    assert.equal(typeof b.responseId, 'string');
    assert.equal(b.usageMetadata.promptTokenCount, Math.ceil('Be brief.\nHello Gemini friend'.length / 4));
    assert.equal(b.usageMetadata.candidatesTokenCount, 4);
    assert.equal(b.usageMetadata.totalTokenCount, b.usageMetadata.promptTokenCount + 4);
  });

  await t.test('streamGenerateContent?alt=sse: data lines, each a GenerateContentResponse', async () => {
    const r = await call(stream, { contents: user('one two three four') }, H);
    assert.match(r.headers.get('content-type') ?? '', /^text\/event-stream/);
    assert.ok(r.text.includes('\r\n\r\n'));
    const chunks = sseJson(r.text) as J[];
    assert.ok(chunks.length >= 3);
    assert.equal(chunks.map((c) => c.candidates[0].content.parts[0].text).join(''), 'Echo: one two three four');
    assert.equal(chunks.at(-1)!.candidates[0].finishReason, 'STOP');
    assert.equal(chunks.at(-1)!.usageMetadata.candidatesTokenCount, 5);
    assert.equal(chunks[0]!.candidates[0].finishReason, undefined);
    const arr = await call(`${mock.url}/models/gemini-2.5-flash:streamGenerateContent`, { contents: user('one two') }, H);
    assert.ok(Array.isArray(arr.json));
  });

  await t.test('function calls: keyword, forced by ANY + allowedFunctionNames, "both", result', async () => {
    const r = (await call(gen, { tools, contents: user('weather now') }, H)).json as J;
    assert.deepEqual(r.candidates[0].content.parts, [{ functionCall: { name: 'get_weather', args: { location: 'Paris' } } }]);
    const f = (await call(gen, { tools, toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_time'] } }, contents: user('hi') }, H)).json as J;
    assert.equal(f.candidates[0].content.parts[0].functionCall.name, 'get_time');
    const s = sseJson((await call(stream, { tools, contents: user('weather for both') }, H)).text) as J[];
    assert.equal(s.length, 1);
    assert.deepEqual(s[0]!.candidates[0].content.parts.map((p: J) => p.functionCall.args), [{ location: 'Paris' }, { city: 'London' }]);
    const res = (await call(gen, { tools, contents: [
      ...user('weather?'),
      { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { location: 'Paris' } } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { temp: 21 } } }] },
    ] }, H)).json as J;
    assert.equal(res.candidates[0].content.parts[0].text, 'The tool returned: {"temp":21}');
  });

  await t.test('thinkingConfig.includeThoughts: thought part with signature and thoughtsTokenCount', async () => {
    const body = { contents: user('think hard'), generationConfig: { thinkingConfig: { includeThoughts: true, thinkingBudget: 1024 } } };
    const r = (await call(gen, body, H)).json as J;
    const [thought, answer] = r.candidates[0].content.parts;
    assert.equal(thought.thought, true);
    assert.ok(thought.thoughtSignature.length > 20);
    assert.equal(answer.text, 'Echo: think hard');
    const u = r.usageMetadata;
    assert.ok(u.thoughtsTokenCount > 0);
    assert.equal(u.totalTokenCount, u.promptTokenCount + u.candidatesTokenCount + u.thoughtsTokenCount);
    const s = sseJson((await call(stream, body, H)).text) as J[];
    assert.equal(s[0]!.candidates[0].content.parts[0].thought, true);
  });

  await t.test('stopSequences and maxOutputTokens', async () => {
    const s = (await call(gen, { contents: user('one two three'), generationConfig: { stopSequences: ['two'] } }, H)).json as J;
    assert.equal(s.candidates[0].content.parts[0].text, 'Echo: one ');
    assert.equal(s.candidates[0].finishReason, 'STOP');
    const m = (await call(gen, { contents: user('one two three'), generationConfig: { maxOutputTokens: 2 } }, H)).json as J;
    assert.equal(m.candidates[0].finishReason, 'MAX_TOKENS');
    assert.equal(m.candidates[0].content.parts[0].text, 'Echo: one');
  });

  await t.test('implicit caching: cachedContentTokenCount on a repeated long prefix', async () => {
    const sys = { parts: [{ text: 'lorem ipsum dolor sit amet '.repeat(200) }] };
    const first = (await call(gen, { systemInstruction: sys, contents: user('a') }, H)).json as J;
    assert.equal(first.usageMetadata.cachedContentTokenCount, undefined);
    const second = (await call(gen, { systemInstruction: sys, contents: user('b') }, H)).json as J;
    assert.ok(second.usageMetadata.cachedContentTokenCount >= 1024);
    assert.ok(second.usageMetadata.cachedContentTokenCount <= second.usageMetadata.promptTokenCount);
  });
});

test('gemini mock: faults and auth', async (t) => {
  const mock = await startMockGemini({ apiKey: 'AIza-right' });
  t.after(() => mock.close());
  const ok = { 'x-goog-api-key': 'AIza-right' };
  const gen = `${mock.url}/models/gemini-2.5-pro:generateContent`;
  const stream = `${mock.url}/models/gemini-2.5-pro:streamGenerateContent?alt=sse`;
  const body = { contents: user('one two three four five') };

  await t.test('auth: missing key 403, wrong key 400, key query parameter accepted', async () => {
    const missing = await call(gen, body, {});
    assert.equal(missing.status, 403);
    assert.equal((missing.json as J).error.status, 'PERMISSION_DENIED');
    const wrong = await call(gen, body, { 'x-goog-api-key': 'bad' });
    assert.equal(wrong.status, 400);
    assert.equal((wrong.json as J).error.code, 400);
    assert.equal((await call(`${gen}?key=AIza-right`, body, {})).status, 200);
  });

  await t.test('status faults in Google shape', async () => {
    mock.fault([{ status: 429, retryAfter: 5 }, { status: 503 }]);
    const a = await call(gen, body, ok);
    assert.deepEqual((a.json as J).error, { code: 429, message: 'Rate limit exceeded (injected fault).', status: 'RESOURCE_EXHAUSTED' });
    assert.equal(a.headers.get('retry-after'), '5');
    assert.equal(((await call(gen, body, ok)).json as J).error.status, 'UNAVAILABLE');
  });

  await t.test('delay, disconnect, malformed, hang, reset', async () => {
    mock.fault({ delayFirstByteMs: 120 });
    const t0 = Date.now();
    await call(gen, body, ok);
    assert.ok(Date.now() - t0 >= 110);
    mock.fault({ disconnectAfterChunks: 1 });
    const cut = await readAll(await fetch(stream, { method: 'POST', headers: ok, body: JSON.stringify(body) }));
    assert.ok(cut.broken);
    assert.equal(parseSse(cut.text).length, 1);
    mock.fault({ malformedSse: true });
    const text = (await call(stream, body, ok)).text;
    assert.equal(parseSse(text).length, sseJson(text).length + 1);
    mock.fault({ hang: true });
    await assert.rejects(fetch(gen, { method: 'POST', headers: ok, body: JSON.stringify(body), signal: AbortSignal.timeout(200) }));
    mock.fault({ resetConnection: true });
    await assert.rejects(fetch(gen, { method: 'POST', headers: ok, body: JSON.stringify(body) }));
    assert.equal((await call(gen, body, { ...ok, 'x-mock-fault': '{"status":500}' })).status, 500);
  });
});
