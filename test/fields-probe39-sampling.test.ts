// Sampling controls on OpenAI's reasoning models. OpenAI refuses temperature other than 1, top_p,
// penalties and logprobs on the o-series and GPT-5 (400 "Unsupported value: 'temperature' does not
// support 0.5 with this model. Only the default (1) value is supported."), and on GPT-5.1 and later
// unless reasoning effort is none. providers/openai.yaml refused temperature and top_p by model name
// with a 400 of its own, before anything was sent: an Anthropic client (whose SDK examples set a
// temperature), a router fallback or a chat client got a 400 for a field the model merely ignores;
// penalties and logprobs were relayed and refused upstream, and gpt-5.2 with effort none was refused
// though OpenAI takes it. Now the model's catalog record says which controls it takes
// (`sampling`), and the provider's mapping rows leave out the others, reported in x-gateway-adjustments.
// Other makers' reasoning models (Gemini here) keep their temperature.
// Claude from Opus 4.7 on removed temperature, top_p and top_k ("`temperature` is deprecated for this
// model", on Anthropic and on Bedrock): relayed or translated, they reached it and were refused; now the
// catalog marks those models `sampling: none` and providers/anthropic.yaml and bedrock.yaml leave them out.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import type { MockUpstream } from './mocks/index.ts';
import { oneModelOnEach, startFourMocks } from './helpers/four-formats.ts';
import { startTestGateway, TEST_PRICING, type TestGateway } from './helpers/gateway.ts';

type Rec = Record<string, any>;

let oai: MockUpstream; let ant: MockUpstream; let gem: MockUpstream; let bed: MockUpstream; let gw: TestGateway;
let openai: OpenAI; let anthropic: Anthropic;

const yamlOf = (path: string): Rec => parse(readFileSync(new URL(path, import.meta.url), 'utf8')) as Rec;
const caps = { tools: true, reasoning: true, structured_output: true };
const model = (name: string, sampling?: string): Rec & { name: string } => ({ name, pricing: TEST_PRICING, capabilities: caps, max_completion_tokens: 8000, ...(sampling ? { sampling } : {}) });

before(async () => {
  ({ oai, ant, gem, bed } = await startFourMocks());
  gw = await startTestGateway({
    providers: [
      ...oneModelOnEach({ oai, ant, gem, bed }, model('test-model')),
      // OpenAI's own mapping rows, as the repository ships them.
      { id: 'openai', format: 'openai-chat', base_url: oai.url, mappings: yamlOf('../providers/openai.yaml').mappings,
        models: [model('gpt-5', 'none'), model('gpt-5.2', 'without_reasoning'), { ...model('gpt-4o'), capabilities: { tools: true } }] },
      // Anthropic's and Bedrock's, likewise, with a Claude that takes sampling controls and one that does not.
      { id: 'anthropic', format: 'anthropic-messages', base_url: ant.url, mappings: yamlOf('../providers/anthropic.yaml').mappings,
        models: [model('claude-opus-4-8', 'none'), model('claude-sonnet-4-6')] },
      { id: 'bedrock', format: 'bedrock-converse', base_url: bed.url, mappings: yamlOf('../providers/bedrock.yaml').mappings,
        models: [model('global.anthropic.claude-opus-4-8-v1:0', 'none')] },
    ],
  });
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: gw.url, apiKey: 'unused', maxRetries: 0 });
});
after(async () => { await gw.stop(); for (const m of [oai, ant, gem, bed]) await m.close(); });

// @anthropic-ai/sdk 1.14 no longer types temperature and top_p; clients written before it (and raw HTTP) send them.
const sampling = (o: Rec): {} => o;
const adjustments = (h: Headers): string[] => (h.get('x-gateway-adjustments') ?? '').split(', ').filter((a) => a !== '');
const lastSent = (m: MockUpstream): Rec => m.requests.at(-1)!.body as Rec;

describe('the OpenAI mock refuses what OpenAI refuses', () => {
  test('temperature 0.5 on gpt-5: 400 naming the parameter, in OpenAI\'s shape', async () => {
    const r = await fetch(`${oai.url}/chat/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer k' },
      body: JSON.stringify({ model: 'gpt-5', messages: [{ role: 'user', content: 'Hi' }], temperature: 0.5 }),
    });
    assert.equal(r.status, 400);
    const e = (await r.json() as Rec).error;
    assert.equal(e.type, 'invalid_request_error');
    assert.equal(e.param, 'temperature');
    assert.equal(e.code, 'unsupported_value');
    assert.match(e.message, /Only the default \(1\) value is supported/);
  });

  test('gpt-5.2 takes temperature with reasoning effort none only', async () => {
    const send = (extra: Rec) => fetch(`${oai.url}/chat/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer k' },
      body: JSON.stringify({ model: 'gpt-5.2', messages: [{ role: 'user', content: 'Hi' }], temperature: 0.5, ...extra }),
    });
    assert.equal((await send({ reasoning_effort: 'none' })).status, 200);
    assert.equal((await send({ reasoning_effort: 'low' })).status, 400);
  });
});

describe('a temperature for an OpenAI reasoning model', () => {
  test('from a Messages client: left out and reported, the answer is 200', async () => {
    oai.reset();
    const { response } = await anthropic.messages.create({
      model: 'openai/gpt-5', max_tokens: 200, ...sampling({ temperature: 0.5, top_p: 0.9 }), messages: [{ role: 'user', content: 'Name a colour.' }],
    }).withResponse();
    const adj = adjustments(response.headers);
    for (const a of ['temperature=dropped', 'top_p=dropped']) assert.ok(adj.includes(a), `${a} in ${adj.join(', ')}`);
    const sent = lastSent(oai);
    assert.equal(sent.model, 'gpt-5');
    assert.equal(sent.temperature, undefined);
    assert.equal(sent.top_p, undefined);
  });

  test('from a chat client to gpt-5 (relayed): every sampling control is left out and reported', async () => {
    oai.reset();
    const { response } = await openai.chat.completions.create({
      model: 'openai/gpt-5', messages: [{ role: 'user', content: 'Name a colour.' }], max_completion_tokens: 200,
      temperature: 0.2, top_p: 0.5, presence_penalty: 0.5, frequency_penalty: 0.3, logprobs: true, top_logprobs: 2, logit_bias: { '1734': -100 },
    }).withResponse();
    const adj = adjustments(response.headers);
    for (const k of ['temperature', 'top_p', 'presence_penalty', 'frequency_penalty', 'logprobs', 'top_logprobs', 'logit_bias']) {
      assert.ok(adj.includes(`${k}=dropped`), `${k}=dropped in ${adj.join(', ')}`);
      assert.equal(lastSent(oai)[k], undefined, k);
    }
  });

  test('the defaults (temperature 1, top_p 1) go as sent, unreported', async () => {
    const { response } = await openai.chat.completions.create({
      model: 'openai/gpt-5', messages: [{ role: 'user', content: 'Hi' }], max_completion_tokens: 200, temperature: 1, top_p: 1,
    }).withResponse();
    assert.deepEqual(adjustments(response.headers), []);
    assert.equal(lastSent(oai).temperature, 1);
  });

  test('gpt-5.2 with reasoning effort none keeps it; with another effort it is left out', async () => {
    const none = await openai.chat.completions.create({
      model: 'openai/gpt-5.2', messages: [{ role: 'user', content: 'Hi' }], max_completion_tokens: 200, temperature: 0.2, top_p: 0.5, reasoning_effort: 'none',
    }).withResponse();
    assert.deepEqual(adjustments(none.response.headers), []);
    assert.equal(lastSent(oai).temperature, 0.2);
    assert.equal(lastSent(oai).top_p, 0.5);
    const low = await openai.chat.completions.create({
      model: 'openai/gpt-5.2', messages: [{ role: 'user', content: 'Hi' }], max_completion_tokens: 200, temperature: 0.2, reasoning_effort: 'low',
    }).withResponse();
    assert.ok(adjustments(low.response.headers).includes('temperature=dropped'));
    assert.equal(lastSent(oai).temperature, undefined);
  });

  test('a model that does not reason (gpt-4o) keeps it', async () => {
    const { response } = await openai.chat.completions.create({
      model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'Hi' }], max_completion_tokens: 200, temperature: 0.2, presence_penalty: 0.5,
    }).withResponse();
    assert.deepEqual(adjustments(response.headers), []);
    assert.equal(lastSent(oai).temperature, 0.2);
  });

  test('another maker\'s reasoning model (Gemini) keeps it', async () => {
    await anthropic.messages.create({ model: 'gem/test-model', max_tokens: 200, ...sampling({ temperature: 0.5 }), messages: [{ role: 'user', content: 'Hi' }] });
    assert.equal(lastSent(gem).generationConfig.temperature, 0.5);
  });
});

describe('a temperature for Claude from Opus 4.7 on', () => {
  test('the Anthropic mock refuses it as Anthropic does', async () => {
    const r = await fetch(`${ant.url}/messages`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'claude-opus-4-8', max_tokens: 50, temperature: 0, messages: [{ role: 'user', content: 'Hi' }] }),
    });
    assert.equal(r.status, 400);
    assert.match(((await r.json()) as Rec).error.message, /`temperature` is deprecated for this model/);
  });

  test('relayed from a Messages client: left out and reported; Sonnet 4.6 keeps it', async () => {
    const { response } = await anthropic.messages.create({
      model: 'anthropic/claude-opus-4-8', max_tokens: 200, ...sampling({ temperature: 0, top_k: 5 }), messages: [{ role: 'user', content: 'Hi' }],
    }).withResponse();
    const adj = adjustments(response.headers);
    for (const a of ['temperature=dropped', 'top_k=dropped']) assert.ok(adj.includes(a), `${a} in ${adj.join(', ')}`);
    assert.equal(lastSent(ant).temperature, undefined);
    await anthropic.messages.create({ model: 'anthropic/claude-sonnet-4-6', max_tokens: 200, ...sampling({ temperature: 0 }), messages: [{ role: 'user', content: 'Hi' }] });
    assert.equal(lastSent(ant).temperature, 0);
  });

  test('translated from a chat client, for Anthropic and for Bedrock: left out and reported', async () => {
    for (const [id, mock] of [['anthropic/claude-opus-4-8', ant], ['bedrock/global.anthropic.claude-opus-4-8-v1:0', bed]] as const) {
      const { response } = await openai.chat.completions.create({
        model: id, messages: [{ role: 'user', content: 'Hi' }], max_completion_tokens: 200, temperature: 0.2, top_p: 0.5,
      }).withResponse();
      const adj = adjustments(response.headers);
      assert.ok(adj.some((a) => /temperature=dropped$/.test(a)), `${id}: ${adj.join(', ')}`);
      const sent = lastSent(mock);
      assert.equal(sent.temperature ?? sent.inferenceConfig?.temperature, undefined, id);
      assert.equal(sent.top_p ?? sent.inferenceConfig?.topP, undefined, id);
    }
  });
});

describe('the catalog marks the models', () => {
  const byName = (file: string): Map<string, Rec> => new Map((yamlOf(`../providers/catalog/${file}.yaml`).models as Rec[]).map((m) => [m.name, m]));
  test('o-series and GPT-5 take none; GPT-5.1 and later without reasoning; chat models all', () => {
    const oai = byName('openai');
    assert.equal(oai.get('gpt-5')!.sampling, 'none');
    assert.equal(oai.get('o3')!.sampling, 'none');
    assert.equal(oai.get('gpt-5.2')!.sampling, 'without_reasoning');
    assert.equal(oai.get('gpt-4o')!.sampling, undefined);
    const azure = byName('azure');
    assert.equal(azure.get('gpt-5-mini')!.sampling, 'none');
    assert.equal(azure.get('gpt-5-chat')!.sampling, undefined);
    assert.equal(azure.get('gpt-5-chat')!.capabilities.reasoning, true, 'the source calls it reasoning; the sampling rule knows better');
  });
  test('Claude from Opus 4.7 on takes none, on Anthropic and Bedrock; Opus 4.6 and Sonnet 4.6 all', () => {
    const ant = byName('anthropic');
    for (const n of ['claude-opus-4-7', 'claude-opus-4-8', 'claude-sonnet-5', 'claude-haiku-5-5']) assert.equal(ant.get(n)!.sampling, 'none', n);
    for (const n of ['claude-opus-4-6', 'claude-sonnet-4-6', 'claude-haiku-4-5-20251001']) assert.equal(ant.get(n)!.sampling, undefined, n);
    assert.equal(byName('bedrock').get('global.anthropic.claude-opus-4-7-v1:0')!.sampling, 'none');
  });
});
