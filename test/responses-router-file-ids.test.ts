// Router mode on POST /v1/responses with images and files sent by the API's own file id (uploaded to
// the Files API: ResponseInputImage / ResponseInputFile with `file_id` in the openai package): only a
// server of the Responses API can read them, so the conversation is ranked (not refused by the
// translator, as it was until 2026-11-29) and kept to the candidates that relay the API natively,
// which get the parts as sent; a named translated model still gets the translator's 400; the vision
// requirement still holds (the part is ranked as an image by reference).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startMockAnthropic, startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';

type Rec = Record<string, any>;
let oai: MockUpstream; let blind: MockUpstream; let ant: MockUpstream; let gw: TestGateway; let client: OpenAI;
const caps = (vision: boolean) => ({ tools: true, vision, reasoning: false, structured_output: false, prompt_caching: false });
const model = (name: string, prompt: string, vision = true) => ({ name, pricing: { prompt, completion: prompt }, capabilities: caps(vision), context_window: 200000, max_completion_tokens: 4000 });

before(async () => {
  [oai, blind, ant] = await Promise.all([startMockOpenAI(), startMockOpenAI(), startMockAnthropic()]);
  gw = await startTestGateway({
    providers: [
      { id: 'oai', format: 'openai-chat', base_url: oai.url, paths: { responses: '/responses' }, models: [model('seer-1', '0.000002')] },
      // Native, cheaper, but reads no images.
      { id: 'blind', format: 'openai-chat', base_url: blind.url, paths: { responses: '/responses' }, models: [model('text-1', '0.0000001', false)] },
      // Translated (Messages), the cheapest, reads images.
      { id: 'ant', format: 'anthropic-messages', base_url: ant.url, models: [model('cheap-1', '0.00000005')] },
    ],
    gateway: {
      reload: { watch: false },
      router: { exploration: { share: 0 }, affinity: { enabled: false }, learning: { train_interval_ms: 3_600_000, state_poll_ms: 3_600_000 } },
    },
  });
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
});
after(async () => { await gw?.stop(); await Promise.all([oai?.close(), blind?.close(), ant?.close()]); });

const ALL = ['seer-1', 'text-1', 'cheap-1'];
const image: OpenAI.Responses.ResponseInputImage = { type: 'input_image', detail: 'auto', file_id: 'file-6F2ksmvXxt4VdoqmHRw6kL' };
const pdf: OpenAI.Responses.ResponseInputFile = { type: 'input_file', file_id: 'file-2ezbwqgGNZXLaUq6KAFa7Z' };
const asking = (...parts: OpenAI.Responses.ResponseInputContent[]): OpenAI.Responses.ResponseInputItem[] => [
  { role: 'user', content: [{ type: 'input_text', text: 'What does this show?' }, ...parts] },
];
const routed = (p: Rec): OpenAI.Responses.ResponseCreateParamsNonStreaming => ({ model: 'router', ...p }) as OpenAI.Responses.ResponseCreateParamsNonStreaming;

test('an image and a file by file_id: routed to the native candidate that reads images, which gets them as sent', async () => {
  for (const m of [oai, blind, ant]) m.reset();
  const input = asking(image, pdf);
  const { data: r, response: http } = await client.responses.create(routed({ models: ALL, willingness_to_pay: 1e-12, input })).withResponse();
  assert.equal(r.model, 'oai/seer-1');
  assert.equal(r.output_text, 'Echo: What does this show?');
  assert.match(http.headers.get('x-router-excluded') ?? '', /capability:native_responses=1/);
  assert.match(http.headers.get('x-router-excluded') ?? '', /capability:vision=1/);
  assert.deepEqual((oai.requests.at(-1)!.body as Rec).input, input, 'the parts go up with their file ids');
  assert.equal(blind.requests.length + ant.requests.length, 0);
  // The control: the same image by URL goes to the cheapest, translated.
  const byUrl = await client.responses.create(routed({ models: ALL, willingness_to_pay: 1e-12, input: asking({ type: 'input_image', detail: 'auto', image_url: 'https://example.com/chart.png' }) }));
  assert.equal(byUrl.model, 'ant/cheap-1');
});

test('the dry run names the part; only translated candidates: the 400 names it; a named translated model: the translator\'s 400', async () => {
  const dry = await (await fetch(`${gw.url}/v1/router/rank?format=responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ models: ALL, input: asking(pdf) }) })).json() as Rec;
  assert.equal(dry.model, 'oai/seer-1');
  assert.match(dry.candidates.find((c: Rec) => c.id === 'ant/cheap-1').excluded.reason, /input\[0\]\.content\[1\] input_file file_id/);
  const before = oai.requests.length + ant.requests.length;
  await assert.rejects(client.responses.create(routed({ models: ['cheap-1'], input: asking(image) })), (e: unknown) => {
    assert.ok(e instanceof OpenAI.BadRequestError, String(e));
    assert.match(e.message, /capability:native_responses excluded 1: ant\/cheap-1 \(the request holds input\[0\]\.content\[1\] input_image file_id/);
    return true;
  });
  await assert.rejects(client.responses.create({ model: 'ant/cheap-1', input: asking(image) }), (e: unknown) => {
    assert.ok(e instanceof OpenAI.BadRequestError, String(e));
    assert.match(e.message, /file_id/);
    return true;
  });
  assert.equal(oai.requests.length + ant.requests.length, before, 'no upstream call');
});
