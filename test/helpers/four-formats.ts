// A test gateway in front of one mock of each translated wire format (OpenAI chat, Anthropic Messages,
// Bedrock Converse, Gemini), for tests of what a Messages client's conversation becomes on each
// (tool search, mid-conversation tool changes). Anthropic's model is the dearest, so the router's
// cheapest choice is a translated target; the client's `anthropic-beta` reaches Anthropic.
import { startMockAnthropic, startMockBedrock, startMockGemini, startMockOpenAI, type MockUpstream } from '../mocks/index.ts';
import { startTestGateway, TEST_PRICING, type TestGateway, type TestProvider } from './gateway.ts';

export type FourFormats = { openai: MockUpstream; anthropic: MockUpstream; bedrock: MockUpstream; gemini: MockUpstream; gw: TestGateway; close(): Promise<void> };

const caps = { tools: true, vision: false, reasoning: false, structured_output: false, prompt_caching: false };
const model = (name: string, pricing: Record<string, string> = TEST_PRICING) => ({ name, pricing, capabilities: caps, context_window: 200000, max_completion_tokens: 4000 });

export async function startFourFormats(): Promise<FourFormats> {
  const [openai, anthropic, bedrock, gemini] = await Promise.all([startMockOpenAI(), startMockAnthropic(), startMockBedrock(), startMockGemini()]);
  const providers: TestProvider[] = [
    { id: 'openai', format: 'openai-chat', base_url: openai.url, models: [model('gpt-4o-mini'), model('gpt-test')] },
    { id: 'anthropic', format: 'anthropic-messages', base_url: anthropic.url, forward_headers: ['anthropic-beta'], models: [model('claude-test', { prompt: '0.000003', completion: '0.000015' })] },
    { id: 'bedrock', format: 'bedrock-converse', base_url: bedrock.url, models: [model('anthropic.claude-test-v1:0')] },
    { id: 'gemini', format: 'gemini', base_url: gemini.url, models: [model('gemini-2.5-flash')] },
  ];
  const gw = await startTestGateway({ providers, gateway: { router: { exploration: { share: 0 } } } });
  return {
    openai, anthropic, bedrock, gemini, gw,
    async close() { await gw.stop(); await Promise.all([openai, anthropic, bedrock, gemini].map((m) => m.close())); },
  };
}

/** One mock of each wire format, named by provider id. */
export type FourMocks = { oai: MockUpstream; ant: MockUpstream; gem: MockUpstream; bed: MockUpstream };

export async function startFourMocks(): Promise<FourMocks> {
  const [oai, ant, gem, bed] = await Promise.all([startMockOpenAI(), startMockAnthropic(), startMockGemini(), startMockBedrock()]);
  return { oai, ant, gem, bed };
}

/**
 * A provider of each format (ids oai, ant, gem, bed) serving the same `model` entry, Bedrock's under an
 * Anthropic model id: `<id>/test-model` names the same ask on each wire format.
 */
export const oneModelOnEach = (m: FourMocks, model: Record<string, unknown> & { name: string }): TestProvider[] => [
  { id: 'oai', format: 'openai-chat', base_url: m.oai.url, models: [model] },
  { id: 'ant', format: 'anthropic-messages', base_url: m.ant.url, models: [model] },
  { id: 'gem', format: 'gemini', base_url: m.gem.url, models: [model] },
  { id: 'bed', format: 'bedrock-converse', base_url: m.bed.url, models: [{ ...model, upstream: `anthropic.claude-${model.name}` }] },
];
