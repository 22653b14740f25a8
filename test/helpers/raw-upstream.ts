// A scripted upstream for failure-path tests: each request is answered by the next queued script
// (status, headers, body chunks written one by one, then end, cut or stall), so a test can send the
// exact bytes a misbehaving provider would. It counts open and closed connections.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';

export type Script = {
  status?: number;
  headers?: Record<string, string>;
  /** Written in order, each in its own write (a separate TCP segment as far as timing allows). */
  chunks?: Array<string | Buffer>;
  /** Milliseconds between chunks (default 0). */
  gapMs?: number;
  /** What happens after the chunks: end the response (default), destroy the socket, or keep it open. */
  then?: 'end' | 'cut' | 'stall';
  /** Wait this long before the status line. */
  delayMs?: number;
};

export type RawUpstream = {
  url: string;
  /** Queue scripts; each request takes the next one (the last one repeats when the queue runs dry). */
  push(...s: Script[]): void;
  /** Drops queued scripts and recorded requests (a test's leftovers must not answer the next test). */
  reset(): void;
  requests: Array<{ path: string; headers: IncomingMessage['headers']; body: string }>;
  /** Responses whose socket was closed (by either side) before they ended normally. */
  closedEarly(): number;
  close(): Promise<void>;
};

export async function startRawUpstream(): Promise<RawUpstream> {
  const queue: Script[] = [];
  let last: Script = { status: 500, chunks: ['{"error":{"message":"no script"}}'] };
  const requests: RawUpstream['requests'] = [];
  let early = 0;
  const open = new Set<ServerResponse>();
  const server: Server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      requests.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(parts).toString('utf8') });
      const s = queue.shift() ?? last;
      last = s;
      open.add(res);
      res.on('close', () => { open.delete(res); if (!res.writableFinished) early++; });
      void play(res, s);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    push: (...s) => { queue.push(...s); },
    reset: () => { queue.length = 0; requests.length = 0; },
    requests,
    closedEarly: () => early,
    close: async () => {
      for (const r of open) r.destroy();
      server.closeAllConnections();
      await new Promise<void>((ok) => server.close(() => ok()));
    },
  };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function play(res: ServerResponse, s: Script): Promise<void> {
  if (s.delayMs) await sleep(s.delayMs);
  if (res.destroyed) return;
  res.writeHead(s.status ?? 200, s.headers ?? { 'content-type': 'text/event-stream' });
  for (const c of s.chunks ?? []) {
    if (res.destroyed) return;
    res.write(c);
    if (s.gapMs) await sleep(s.gapMs);
  }
  if (s.then === 'stall') return;
  if (s.then === 'cut') {
    const socket = res.socket;
    if (socket) socket.write('', () => socket.destroy()); else res.destroy();
    return;
  }
  res.end();
}

/** One SSE frame (`event:` line when named). */
export const sse = (data: unknown, event?: string): string =>
  `${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;

/** An OpenAI chat.completion.chunk with a content delta (or none). */
export const chatChunk = (content: string | null, extra: Record<string, unknown> = {}): string => sse({
  id: 'chatcmpl-raw', object: 'chat.completion.chunk', created: 1, model: 'm',
  choices: [{ index: 0, delta: content === null ? { role: 'assistant', content: '' } : { content }, finish_reason: null }], ...extra,
});

export const chatFinish = (usage?: Record<string, unknown>): string =>
  sse({ id: 'chatcmpl-raw', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })
  + (usage ? sse({ id: 'chatcmpl-raw', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage }) : '');

export const messageStart = (usage: Record<string, unknown> = { input_tokens: 10, output_tokens: 1 }): string => sse({
  type: 'message_start', message: { id: 'msg_raw', type: 'message', role: 'assistant', model: 'm', content: [], stop_reason: null, stop_sequence: null, usage },
}, 'message_start');

export const textBlock = (text: string): string =>
  sse({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, 'content_block_start')
  + sse({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }, 'content_block_delta');

export const messageEnd = (output: number): string =>
  sse({ type: 'content_block_stop', index: 0 }, 'content_block_stop')
  + sse({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: output } }, 'message_delta')
  + sse({ type: 'message_stop' }, 'message_stop');
