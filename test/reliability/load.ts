// The load the reliability suite drives through a gateway: closed-loop workers (as many requests as
// the gateway takes) or an open-loop fixed rate, mixing client formats, streams, client aborts and
// models; every answer is classified by the independent checker, and every inference id the gateway
// handed out is kept, so a suite can compare what was acknowledged with what was stored.
import { checkAnswer, CLIENTS, type ClientName } from '../helpers/answer-shape.ts';

export type Shot = {
  /** The inference id the gateway sent (x-inference-id), null when no answer came back at all. */
  id: string | null; status: number; stream: boolean; client: ClientName; model: string;
  /** ok / error / partial (checker), aborted (this client hung up mid-stream on purpose), failed (no answer: connection refused or reset), malformed. */
  kind: 'ok' | 'error' | 'partial' | 'aborted' | 'failed' | 'malformed';
  /** Epoch ms when the answer was complete (or the attempt ended). */
  at: number;
  detail?: string;
};

export type LoadOptions = {
  url: string;
  key?: string;
  models: string[];
  clients?: ClientName[];
  /** Share of stream requests (0..1, default 0.5) and of streams this client abandons after the first bytes (default 0). */
  streamShare?: number;
  abortShare?: number;
  prompt?: (i: number) => string;
  /** Extra request headers per request (e.g. an x-mock-fault). */
  headers?: (i: number) => Record<string, string>;
  /** Closed loop: this many workers until `until()` says stop. */
  concurrency?: number;
  /** Open loop: start this many requests per second (never more than `maxInFlight` at once). */
  rate?: number;
  maxInFlight?: number;
  until: () => boolean;
  timeoutMs?: number;
};

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Deterministic per-request choices from the request number (no randomness: runs repeat). */
function pick(i: number, share: number, salt: number): boolean {
  return ((i * 2654435761 + salt) >>> 0) % 1000 < share * 1000;
}

export async function shoot(o: LoadOptions, i: number): Promise<Shot> {
  const clients = o.clients ?? ['chat', 'messages'];
  const client = clients[i % clients.length]!;
  const model = o.models[Math.floor(i / clients.length) % o.models.length]!;
  const stream = pick(i, o.streamShare ?? 0.5, 17);
  const abort = stream && pick(i, o.abortShare ?? 0, 91);
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), o.timeoutMs ?? 30_000);
  const base = { stream, client, model };
  try {
    const r = await fetch(`${o.url}${CLIENTS[client].path}`, {
      method: 'POST', signal: ac.signal,
      headers: { 'content-type': 'application/json', ...(o.key ? { authorization: `Bearer ${o.key}` } : {}), ...o.headers?.(i) },
      body: JSON.stringify(CLIENTS[client].body(model, stream, o.prompt?.(i) ?? `load request ${i} with a few words to echo`)),
    });
    const id = r.headers.get('x-inference-id');
    if (abort && r.status === 200) {
      const reader = r.body!.getReader();
      await reader.read();
      ac.abort();
      await reader.cancel().catch(() => {});
      return { ...base, id, status: r.status, kind: 'aborted', at: Date.now() };
    }
    const bytes = Buffer.from(await r.arrayBuffer());
    try {
      const { kind } = checkAnswer(client, r, bytes, stream);
      return { ...base, id, status: r.status, kind, at: Date.now() };
    } catch (e) {
      return { ...base, id, status: r.status, kind: 'malformed', at: Date.now(), detail: `${String(e).slice(0, 200)} | ${bytes.toString('utf8').slice(0, 200)}` };
    }
  } catch (e) {
    return { ...base, id: null, status: 0, kind: 'failed', at: Date.now(), detail: String((e as Error).cause ?? e).slice(0, 200) };
  } finally {
    clearTimeout(timer);
  }
}

/** Runs the load until `until()` is true and every started request has ended. */
export async function runLoad(o: LoadOptions): Promise<Shot[]> {
  const shots: Shot[] = [];
  let next = 0;
  if (o.rate === undefined) {
    await Promise.all(Array.from({ length: o.concurrency ?? 8 }, async () => {
      while (!o.until()) shots.push(await shoot(o, next++));
    }));
    return shots;
  }
  const gap = 1000 / o.rate;
  const running = new Set<Promise<void>>();
  const t0 = Date.now();
  while (!o.until()) {
    const due = t0 + next * gap;
    if (Date.now() < due) { await sleep(Math.min(due - Date.now(), 50)); continue; }
    if (running.size >= (o.maxInFlight ?? 64)) { await Promise.race(running); continue; }
    const p = shoot(o, next++).then((s) => { shots.push(s); running.delete(p); });
    running.add(p);
  }
  await Promise.all(running);
  return shots;
}

/** Counts shots by kind. */
export function tally(shots: Shot[]): Record<string, number> {
  const out: Record<string, number> = { total: shots.length };
  for (const s of shots) out[s.kind] = (out[s.kind] ?? 0) + 1;
  return out;
}
