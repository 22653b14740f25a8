// Minimal mock upstream for the benchmarks: fixed OpenAI chat.completion / SSE answers on
// POST /v1/chat/completions and fixed Anthropic message / SSE answers on POST /v1/messages.
// Deliberately cheap (pre-built buffers, one regex test per request) so it steals little CPU.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { announceReady, isMainModule } from './child.ts';

const CREATED = 1_700_000_000;
const WORDS = ['Hello', ' from', ' the', ' bench', ' upstream', '.'];

function sse(data: unknown, event?: string): string {
  return (event ? `event: ${event}\n` : '') + `data: ${JSON.stringify(data)}\n\n`;
}

const openaiJson = Buffer.from(JSON.stringify({
  id: 'chatcmpl-bench', object: 'chat.completion', created: CREATED, model: 'gpt-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content: WORDS.join('') }, finish_reason: 'stop', logprobs: null }],
  usage: { prompt_tokens: 8, completion_tokens: WORDS.length, total_tokens: 8 + WORDS.length },
}));

function openaiChunk(delta: object, finish: string | null): object {
  return { id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: CREATED, model: 'gpt-4o-mini',
    choices: [{ index: 0, delta, finish_reason: finish }] };
}

// Each element is written with its own res.write so a pass-through can stream it on.
export const openaiStream: Buffer[] = [
  sse(openaiChunk({ role: 'assistant', content: '' }, null)),
  ...WORDS.map((w) => sse(openaiChunk({ content: w }, null))),
  sse(openaiChunk({}, 'stop')),
  sse({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: CREATED, model: 'gpt-4o-mini', choices: [],
    usage: { prompt_tokens: 8, completion_tokens: WORDS.length, total_tokens: 8 + WORDS.length } }),
  'data: [DONE]\n\n',
].map((s) => Buffer.from(s));

const anthropicJson = Buffer.from(JSON.stringify({
  id: 'msg_bench', type: 'message', role: 'assistant', model: 'claude-haiku-4-5-20251001',
  content: [{ type: 'text', text: WORDS.join('') }], stop_reason: 'end_turn', stop_sequence: null,
  usage: { input_tokens: 8, output_tokens: WORDS.length },
}));

export const anthropicStream: Buffer[] = [
  sse({ type: 'message_start', message: { id: 'msg_bench', type: 'message', role: 'assistant', model: 'claude-haiku-4-5-20251001',
    content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 8, output_tokens: 1 } } }, 'message_start'),
  sse({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, 'content_block_start'),
  ...WORDS.map((w) => sse({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: w } }, 'content_block_delta')),
  sse({ type: 'content_block_stop', index: 0 }, 'content_block_stop'),
  sse({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: WORDS.length } }, 'message_delta'),
  sse({ type: 'message_stop' }, 'message_stop'),
].map((s) => Buffer.from(s));

const STREAM_RE = /"stream"\s*:\s*true/;
const JSON_HEADERS = { 'content-type': 'application/json' };
const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };

function answer(res: http.ServerResponse, json: Buffer, stream: Buffer[], wantsStream: boolean): void {
  if (!wantsStream) {
    res.writeHead(200, { ...JSON_HEADERS, 'content-length': json.length });
    res.end(json);
    return;
  }
  res.writeHead(200, SSE_HEADERS);
  for (let i = 0; i < stream.length - 1; i++) res.write(stream[i]);
  res.end(stream[stream.length - 1]);
}

/** Handles one request; exported so tests or other benches can mount it. */
export function handleUpstream(req: http.IncomingMessage, res: http.ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const url = req.url ?? '';
    if (req.method !== 'POST') {
      res.writeHead(404, JSON_HEADERS).end('{"error":{"message":"not found"}}');
      return;
    }
    const wantsStream = STREAM_RE.test(Buffer.concat(chunks).toString('latin1'));
    if (url.endsWith('/chat/completions')) answer(res, openaiJson, openaiStream, wantsStream);
    else if (url.endsWith('/messages')) answer(res, anthropicJson, anthropicStream, wantsStream);
    else res.writeHead(404, JSON_HEADERS).end('{"error":{"message":"not found"}}');
  });
}

/** Starts the upstream on 127.0.0.1 (port 0 = any); resolves with the bound port. */
export async function startUpstream(port = 0): Promise<{ server: http.Server; port: number }> {
  const server = http.createServer({ keepAliveTimeout: 60_000 }, handleUpstream);
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

if (isMainModule(import.meta.url)) {
  const { port } = await startUpstream(Number(process.env.PORT ?? 0));
  announceReady(port);
}
