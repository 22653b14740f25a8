// Documents of a Messages conversation translated for OpenAI, Gemini and Bedrock.
// 1. A document's `title` and `context`, which Anthropic shows the model with the document, were
//    dropped without a word off Anthropic (a 200, nothing in x-gateway-adjustments): OpenAI got a text
//    document as bare text, Gemini every document as bare data, nobody the context. Now the model reads
//    them as text just before the document (the title only where the target's part cannot name it:
//    OpenAI's file.filename and Bedrock's document name do), each reported `...title->text`.
// 2. A tool_result holding a document (Anthropic takes text, image, document and search_result
//    content there: a tool that fetched a PDF or a page) was refused with a 400 ("content block type
//    'document' is not supported by this gateway") for every target, Anthropic's own relay aside.
//    Now Bedrock gets it inside its toolResult (Converse takes documents there), Gemini after the
//    function response (as it gets a tool's images), OpenAI a text document in the tool message and a
//    file in the user message that follows (tool messages take text only; reported). A document by URL
//    stays a 400 naming it for OpenAI.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import type { MockUpstream } from './mocks/index.ts';
import { oneModelOnEach, startFourMocks } from './helpers/four-formats.ts';
import { startTestGateway, TEST_PRICING, type TestGateway } from './helpers/gateway.ts';

type Rec = Record<string, any>;

let oai: MockUpstream; let ant: MockUpstream; let gem: MockUpstream; let bed: MockUpstream; let gw: TestGateway; let client: Anthropic;

before(async () => {
  ({ oai, ant, gem, bed } = await startFourMocks());
  const model = { name: 'test-model', pricing: TEST_PRICING, capabilities: { tools: true, vision: true }, modalities: { input: ['text', 'image', 'pdf'], output: ['text'] } };
  gw = await startTestGateway({ providers: oneModelOnEach({ oai, ant, gem, bed }, model) });
  client = new Anthropic({ baseURL: gw.url, apiKey: 'unused', maxRetries: 0 });
});
after(async () => { await gw.stop(); for (const m of [oai, ant, gem, bed]) await m.close(); });

const PDF = Buffer.from('%PDF-1.4\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n').toString('base64');
const adjustments = (h: Headers): string[] => (h.get('x-gateway-adjustments') ?? '').split(', ').filter((a) => a !== '');
const lastSent = (m: MockUpstream): Rec => m.requests.at(-1)!.body as Rec;
const mocks = (): Record<string, MockUpstream> => ({ oai, ant, gem, bed });

// The documented example of a text document with a title and context, and a PDF with its own.
const withDocuments: Anthropic.MessageParam[] = [{
  role: 'user',
  content: [
    { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'The grass is green. The sky is blue.' }, title: 'My Document', context: 'This is a trustworthy document.' },
    { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF }, title: 'Report', context: 'Written in 2024.' },
    { type: 'text', text: 'What color is the grass and sky?' },
  ],
}];

describe('a document\'s title and context', () => {
  test('OpenAI: before the text document both, before the file its context (the file is named by its title)', async () => {
    const { response } = await client.messages.create({ model: 'oai/test-model', max_tokens: 100, messages: withDocuments }).withResponse();
    const parts = lastSent(oai).messages[0].content as Rec[];
    assert.deepEqual(parts[0], { type: 'text', text: 'Document title: My Document\nDocument context: This is a trustworthy document.' });
    assert.deepEqual(parts[1], { type: 'text', text: 'The grass is green. The sky is blue.' });
    assert.deepEqual(parts[2], { type: 'text', text: 'Document context: Written in 2024.' });
    assert.equal(parts[3].type, 'file');
    assert.equal(parts[3].file.filename, 'Report');
    const adj = adjustments(response.headers);
    for (const a of ['messages[0].content[0].title->text', 'messages[0].content[0].context->text', 'messages[0].content[1].context->text']) assert.ok(adj.includes(a), `${a} in ${adj.join(', ')}`);
    assert.ok(!adj.includes('messages[0].content[1].title->text'), adj.join(', '));
  });

  test('Gemini: both, before each document (inline data has no name)', async () => {
    const { response } = await client.messages.create({ model: 'gem/test-model', max_tokens: 100, messages: withDocuments }).withResponse();
    const parts = lastSent(gem).contents[0].parts as Rec[];
    assert.equal(parts[0].text, 'Document title: My Document\nDocument context: This is a trustworthy document.');
    assert.equal(parts[1].text, 'The grass is green. The sky is blue.');
    assert.equal(parts[2].text, 'Document title: Report\nDocument context: Written in 2024.');
    assert.equal(parts[3].inlineData.mimeType, 'application/pdf');
    assert.ok(adjustments(response.headers).includes('messages[0].content[1].title->text'));
  });

  test('Bedrock: the context before each document, named by its title', async () => {
    await client.messages.create({ model: 'bed/test-model', max_tokens: 100, messages: withDocuments });
    const content = lastSent(bed).messages[0].content as Rec[];
    assert.deepEqual(content[0], { text: 'Document context: This is a trustworthy document.' });
    assert.equal(content[1].document.name, 'My Document');
    assert.deepEqual(content[2], { text: 'Document context: Written in 2024.' });
    assert.equal(content[3].document.name, 'Report');
  });

  test('Anthropic: relayed as sent, nothing reported', async () => {
    const { response } = await client.messages.create({ model: 'ant/test-model', max_tokens: 100, messages: withDocuments }).withResponse();
    assert.deepEqual(lastSent(ant).messages, withDocuments);
    assert.deepEqual(adjustments(response.headers), []);
  });
});

// A tool that fetched a page and a PDF.
const toolLoop = (documents: Rec[]): Anthropic.MessageParam[] => [
  { role: 'user', content: 'Fetch the report.' },
  { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01', name: 'fetch', input: { url: 'https://example.com/report' } }] },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: [{ type: 'text', text: 'Fetched 2 files.' }, ...documents] as never }] },
];
const fetchTool: Anthropic.Tool = { name: 'fetch', description: 'Fetches a URL', input_schema: { type: 'object', properties: { url: { type: 'string' } } } };
const pageAndPdf = [
  { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'Revenue grew 12%.' }, title: 'Summary' },
  { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF } },
];

describe('a tool result holding documents', () => {
  for (const target of ['oai', 'gem', 'bed', 'ant']) {
    test(`${target}: answered 200`, async () => {
      mocks()[target]!.reset();
      const r = await client.messages.create({ model: `${target}/test-model`, max_tokens: 100, tools: [fetchTool], messages: toolLoop(pageAndPdf) });
      assert.equal(r.type, 'message');
      assert.equal(mocks()[target]!.requests.length, 1);
    });
  }

  test('OpenAI: the text document in the tool message, the PDF in the user message after it (reported)', async () => {
    const { response } = await client.messages.create({ model: 'oai/test-model', max_tokens: 100, tools: [fetchTool], messages: toolLoop(pageAndPdf) }).withResponse();
    const msgs = lastSent(oai).messages as Rec[];
    const tool = msgs.find((m) => m.role === 'tool')!;
    assert.equal(tool.content, 'Fetched 2 files.\nDocument title: Summary\nRevenue grew 12%.');
    const after = msgs[msgs.indexOf(tool) + 1]!;
    assert.equal(after.role, 'user');
    assert.equal(after.content[0].type, 'file');
    assert.match(after.content[0].file.file_data, /^data:application\/pdf;base64,/);
    const adj = adjustments(response.headers);
    assert.ok(adj.includes('messages[2].content[0].content[2]=document->user message(tool messages take text only)'), adj.join(', '));
    assert.ok(adj.includes('messages[2].content[0].content[1].title->text'), adj.join(', '));
  });

  test('Gemini: the text in the function response, the PDF after it', async () => {
    await client.messages.create({ model: 'gem/test-model', max_tokens: 100, tools: [fetchTool], messages: toolLoop(pageAndPdf) });
    const parts = lastSent(gem).contents.at(-1).parts as Rec[];
    assert.match(parts[0].functionResponse.response.result, /Revenue grew 12%\./);
    assert.equal(parts[1].inlineData.mimeType, 'application/pdf');
  });

  test('Bedrock: both inside the toolResult, as documents', async () => {
    await client.messages.create({ model: 'bed/test-model', max_tokens: 100, tools: [fetchTool], messages: toolLoop(pageAndPdf) });
    const result = (lastSent(bed).messages.at(-1).content as Rec[])[0].toolResult;
    const docs = (result.content as Rec[]).filter((c) => c.document);
    assert.deepEqual(docs.map((d) => [d.document.format, d.document.name]), [['txt', 'Summary'], ['pdf', 'document-2']]);
  });

  test('OpenAI: a document by URL in a tool result is a 400 naming it; nothing is sent', async () => {
    oai.reset();
    const err = await client.messages.create({
      model: 'oai/test-model', max_tokens: 100, tools: [fetchTool],
      messages: toolLoop([{ type: 'document', source: { type: 'url', url: 'https://example.com/report.pdf' } }]),
    }).then(() => null, (e: unknown) => e);
    assert.ok(err instanceof Anthropic.BadRequestError, String(err));
    assert.match(err.message, /messages\[2\]\.content\[0\]\.content\[1\]/);
    assert.equal(oai.requests.length, 0);
  });
});

describe('a Responses function_call_output holding an input_file', () => {
  // FunctionCallOutputItem's content: input_text, input_image and input_file; was a 400 ("a tool output may hold text and images only").
  const body = (model: string): Rec => ({
    model, max_output_tokens: 100,
    tools: [{ type: 'function', name: 'fetch', parameters: { type: 'object', properties: { url: { type: 'string' } } } }],
    input: [
      { role: 'user', content: 'Fetch the report.' },
      { type: 'function_call', call_id: 'call_1', name: 'fetch', arguments: '{"url":"https://example.com/r"}' },
      { type: 'function_call_output', call_id: 'call_1', output: [{ type: 'input_text', text: 'Fetched.' }, { type: 'input_file', filename: 'report.pdf', file_data: `data:application/pdf;base64,${PDF}` }] },
    ],
  });
  const post = (b: Rec) => fetch(`${gw.url}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(b) });

  test('Anthropic gets the file as a document in the tool_result', async () => {
    const r = await post(body('ant/test-model'));
    assert.equal(r.status, 200, await r.clone().text());
    const result = (lastSent(ant).messages.at(-1).content as Rec[])[0];
    assert.equal(result.type, 'tool_result');
    assert.deepEqual(result.content[1], { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF }, title: 'report.pdf' });
  });

  test('Bedrock gets it inside the toolResult', async () => {
    const r = await post(body('bed/test-model'));
    assert.equal(r.status, 200, await r.clone().text());
    const result = (lastSent(bed).messages.at(-1).content as Rec[])[0].toolResult;
    assert.equal(result.content[1].document.format, 'pdf');
  });
});
