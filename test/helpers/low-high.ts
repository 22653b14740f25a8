// Two OpenAI-format providers on one mock upstream for router tests: `low/small` (cheap) and
// `high/large` (a hundred times the price), neither with tools, vision, reasoning or caching.
import type { TestProvider } from './gateway.ts';

const caps = { tools: false, vision: false, reasoning: false, structured_output: false, prompt_caching: false };

export function lowHighProviders(url: string): TestProvider[] {
  return [
    { id: 'low', format: 'openai-chat', base_url: url, models: [{ name: 'small', pricing: { prompt: '0.0000001', completion: '0.0000002' }, capabilities: caps }] },
    { id: 'high', format: 'openai-chat', base_url: url, models: [{ name: 'large', pricing: { prompt: '0.00001', completion: '0.00003' }, capabilities: caps }] },
  ];
}
