// OpenAI's image `detail` across formats (src/formats/canonical.ts ImageDetail): a Responses client's
// input_image.detail reaches an OpenAI chat upstream as image_url.detail (it arrived at "auto" before,
// billed at high detail: up to 1,445 tokens on gpt-4o instead of 85); same-format requests are relayed
// with it as sent; Anthropic, Gemini and Bedrock upstreams, which have no such field, never see it
// (Anthropic refuses an unknown key in an image block); a value OpenAI does not take is a 400 in the
// endpoint's own error shape, from the gateway and from the mocks alike.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startMockAnthropic, startMockBedrock, startMockGemini, startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, TEST_PRICING, type TestGateway } from './helpers/gateway.ts';
import { png } from './helpers/image-headers.ts';

type Rec = Record<string, any>;

let oai: MockUpstream; let nat: MockUpstream; let ant: MockUpstream; let gem: MockUpstream; let bed: MockUpstream; let gw: TestGateway;
const IMAGE_URL = 'https://images.example.com/cat.png';
const DATA_URL = `data:image/png;base64,${png(64, 48)}`;

before(async () => {
  [oai, nat, ant, gem, bed] = await Promise.all([startMockOpenAI(), startMockOpenAI(), startMockAnthropic(), startMockGemini(), startMockBedrock()]);
  const caps = { tools: true, vision: true };
  const model = { name: 'test-model', pricing: TEST_PRICING, capabilities: caps };
  gw = await startTestGateway({
    providers: [
      { id: 'oai', format: 'openai-chat', base_url: oai.url, models: [model] },
      { id: 'nat', format: 'openai-chat', base_url: nat.url, paths: { responses: '/responses' }, models: [model] },
      { id: 'ant', format: 'anthropic-messages', base_url: ant.url, models: [model] },
      { id: 'gem', format: 'gemini', base_url: gem.url, models: [model] },
      { id: 'bed', format: 'bedrock-converse', base_url: bed.url, models: [{ ...model, upstream: 'anthropic.claude-test-model' }] },
    ],
  });
});
after(async () => { await gw.stop(); for (const m of [oai, nat, ant, gem, bed]) await m.close(); });

const post = async (path: string, body: Rec): Promise<{ status: number; json: Rec }> => {
  const r = await fetch(`${gw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, json: await r.json() as Rec };
};
const responsesBody = (model: string, parts: Rec[]): Rec => ({ model, input: [{ role: 'user', content: [{ type: 'input_text', text: 'What is this?' }, ...parts] }] });
const chatBody = (model: string, parts: Rec[]): Rec => ({ model, messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, ...parts] }] });
const lastBody = (m: MockUpstream): Rec => m.requests.at(-1)!.body as Rec;

describe('a Responses client to an OpenAI chat upstream', () => {
  test('each input_image\'s detail arrives as image_url.detail (low, high, auto, original), none where none was given', async () => {
    oai.reset();
    const parts = [
      { type: 'input_image', image_url: IMAGE_URL, detail: 'low' },
      { type: 'input_image', image_url: DATA_URL, detail: 'high' },
      { type: 'input_image', image_url: IMAGE_URL, detail: 'auto' },
      { type: 'input_image', image_url: DATA_URL, detail: 'original' },
      { type: 'input_image', image_url: IMAGE_URL },
      { type: 'input_image', image_url: IMAGE_URL, detail: null },
    ];
    const r = await post('/v1/responses', responsesBody('oai/test-model', parts));
    assert.equal(r.status, 200, JSON.stringify(r.json));
    const images = lastBody(oai).messages[0].content.filter((p: Rec) => p.type === 'image_url').map((p: Rec) => p.image_url);
    assert.deepEqual(images, [
      { url: IMAGE_URL, detail: 'low' }, { url: DATA_URL, detail: 'high' }, { url: IMAGE_URL, detail: 'auto' },
      { url: DATA_URL, detail: 'original' }, { url: IMAGE_URL }, { url: IMAGE_URL },
    ]);
  });

  test('an image a tool returned keeps its detail (the user message after the tool message)', async () => {
    oai.reset();
    const r = await post('/v1/responses', {
      model: 'oai/test-model',
      input: [
        { role: 'user', content: 'Take a screenshot.' },
        { type: 'function_call', call_id: 'call_1', name: 'screenshot', arguments: '{}' },
        { type: 'function_call_output', call_id: 'call_1', output: [{ type: 'input_text', text: 'done' }, { type: 'input_image', image_url: DATA_URL, detail: 'low' }] },
      ],
      tools: [{ type: 'function', name: 'screenshot', parameters: { type: 'object', properties: {} } }],
    });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    const parts = lastBody(oai).messages.flatMap((m: Rec) => (Array.isArray(m.content) ? m.content : []));
    assert.deepEqual(parts.filter((p: Rec) => p.type === 'image_url').map((p: Rec) => p.image_url), [{ url: DATA_URL, detail: 'low' }]);
  });
});

describe('relayed as sent where the upstream speaks the client\'s format', () => {
  test('chat completions to a chat upstream: image_url as the client wrote it', async () => {
    oai.reset();
    const part = { type: 'image_url', image_url: { url: IMAGE_URL, detail: 'low' } };
    const r = await post('/v1/chat/completions', chatBody('oai/test-model', [part]));
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.deepEqual(lastBody(oai).messages[0].content[1], part);
  });

  test('Responses to a provider that serves the Responses API: input_image as the client wrote it', async () => {
    nat.reset();
    const part = { type: 'input_image', image_url: DATA_URL, detail: 'low' };
    const r = await post('/v1/responses', responsesBody('nat/test-model', [part]));
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.equal(nat.requests.at(-1)!.path, '/v1/responses');
    assert.deepEqual(lastBody(nat).input[0].content[1], part);
  });
});

describe('formats without detail never see it', () => {
  test('Anthropic: the image block without detail, from a chat client and from a Responses client (a tool result too)', async () => {
    ant.reset();
    const chat = await post('/v1/chat/completions', chatBody('ant/test-model', [{ type: 'image_url', image_url: { url: IMAGE_URL, detail: 'low' } }]));
    assert.equal(chat.status, 200, JSON.stringify(chat.json));
    assert.deepEqual(lastBody(ant).messages[0].content.find((b: Rec) => b.type === 'image'), { type: 'image', source: { type: 'url', url: IMAGE_URL } });
    const resp = await post('/v1/responses', {
      model: 'ant/test-model',
      input: [
        { role: 'user', content: [{ type: 'input_image', image_url: DATA_URL, detail: 'high' }] },
        { type: 'function_call', call_id: 'call_1', name: 'screenshot', arguments: '{}' },
        { type: 'function_call_output', call_id: 'call_1', output: [{ type: 'input_image', image_url: DATA_URL, detail: 'low' }] },
      ],
      tools: [{ type: 'function', name: 'screenshot', parameters: { type: 'object', properties: {} } }],
    });
    assert.equal(resp.status, 200, JSON.stringify(resp.json));
    const sent = JSON.stringify(lastBody(ant));
    assert.ok(sent.includes('"type":"image"') && !sent.includes('detail'), sent.slice(0, 400));
  });

  test('Gemini and Bedrock: the image sent, no detail', async () => {
    for (const [m, id] of [[gem, 'gem'], [bed, 'bed']] as const) {
      m.reset();
      const r = await post('/v1/responses', responsesBody(`${id}/test-model`, [{ type: 'input_image', image_url: DATA_URL, detail: 'low' }]));
      assert.equal(r.status, 200, `${id} ${JSON.stringify(r.json)}`);
      const sent = JSON.stringify(lastBody(m));
      assert.ok(sent.includes(png(64, 48)) && !sent.includes('detail'), id);
    }
  });
});

describe('a detail OpenAI does not take is a 400 in the endpoint\'s error shape', () => {
  test('chat completions: image_url.detail "medium" (and a number) refused before any upstream call', async () => {
    oai.reset();
    for (const detail of ['medium', 3]) {
      const r = await post('/v1/chat/completions', chatBody('oai/test-model', [{ type: 'image_url', image_url: { url: IMAGE_URL, detail } }]));
      assert.equal(r.status, 400);
      assert.equal(r.json.error.type, 'invalid_request_error');
      assert.equal(r.json.error.param, 'messages[0].content[1].image_url.detail');
      assert.match(r.json.error.message, /must be one of auto, low, high, original/);
    }
    assert.equal(oai.requests.length, 0);
  });

  test('Responses: input_image.detail "medium" refused before any upstream call, whichever the target', async () => {
    for (const [m, id] of [[oai, 'oai'], [nat, 'nat'], [ant, 'ant']] as const) {
      m.reset();
      const r = await post('/v1/responses', responsesBody(`${id}/test-model`, [{ type: 'input_image', image_url: IMAGE_URL, detail: 'medium' }]));
      assert.equal(r.status, 400, id);
      assert.equal(r.json.error.type, 'invalid_request_error', id);
      assert.equal(r.json.error.param, 'input[0].content[1].detail', id);
      assert.equal(m.requests.length, 0, id);
    }
  });

  test('the mocks refuse it as the real APIs do: OpenAI chat and Responses a 400 in OpenAI\'s shape, Anthropic any key of its own', async () => {
    const call = async (url: string, body: Rec, headers: Rec = {}): Promise<{ status: number; json: Rec }> => {
      const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test', ...headers }, body: JSON.stringify(body) });
      return { status: r.status, json: await r.json() as Rec };
    };
    const chat = await call(`${oai.url}/chat/completions`, chatBody('gpt-4o', [{ type: 'image_url', image_url: { url: IMAGE_URL, detail: 'medium' } }]));
    assert.equal(chat.status, 400);
    assert.equal(chat.json.error.type, 'invalid_request_error');
    assert.match(chat.json.error.message, /Invalid value: 'medium'/);
    const ok = await call(`${oai.url}/chat/completions`, chatBody('gpt-4o', [{ type: 'image_url', image_url: { url: IMAGE_URL, detail: 'original' } }]));
    assert.equal(ok.status, 200);
    const resp = await call(`${nat.url}/responses`, responsesBody('gpt-4o', [{ type: 'input_image', image_url: IMAGE_URL, detail: 'medium' }]));
    assert.equal(resp.status, 400);
    assert.equal(resp.json.error.type, 'invalid_request_error');
    assert.match(resp.json.error.message, /Invalid value: 'medium'/);
    const a = await call(`${ant.url}/messages`, { model: 'claude-sonnet-4-5', max_tokens: 16, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'url', url: IMAGE_URL }, detail: 'low' }] }] },
      { 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01' });
    assert.equal(a.status, 400);
    assert.match(JSON.stringify(a.json), /messages\.0\.content\.0\.image\.detail: Extra inputs are not permitted/);
  });
});
