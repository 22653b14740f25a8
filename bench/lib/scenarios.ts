// What bench/overhead.ts measures: the request scenarios (pass-through and translated, streaming
// or not) and the systems under test each scenario is sent through.
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

export type SystemName = 'direct' | 'http-proxy-3' | 'http-proxy-3-noagent' | 'undici' | 'gateway' | 'gateway-auth' | 'gateway-auth-pg' | 'gateway-base';
export const ALL_SYSTEMS: readonly SystemName[] = ['direct', 'http-proxy-3', 'http-proxy-3-noagent', 'undici', 'gateway', 'gateway-auth', 'gateway-auth-pg', 'gateway-base'];
export const BASELINES: readonly SystemName[] = ['direct', 'http-proxy-3', 'http-proxy-3-noagent', 'undici'];
/** `gateway-base` is the gateway of another checkout (`--baseline DIR`), e.g. an older commit in a git worktree. */
export const GATEWAYS: readonly SystemName[] = ['gateway', 'gateway-auth', 'gateway-auth-pg', 'gateway-base'];

/** A started system under test; `reason` is set (and origin empty) when it could not start. */
export type System = {
  name: SystemName;
  origin: string;
  /** Process whose CPU time is charged to this system (none for `direct`). */
  child?: ChildProcess;
  apiKey?: string;
  reason?: string;
};

export type Wire = 'chat' | 'messages';
export type RequestSpec = { path: string; body: string; wire: Wire };

export type Scenario = {
  name: string;
  stream: boolean;
  /** Translated: the gateway converts between wire formats; the baselines pass the same client request through to the upstream's native endpoint for that format. */
  translated: boolean;
  description: string;
  request: RequestSpec;
};

const MESSAGES = [{ role: 'user', content: 'hello' }];

function chat(model: string, stream: boolean): RequestSpec {
  const body: Record<string, unknown> = { model, messages: MESSAGES, max_tokens: 16 };
  if (stream) body.stream = true;
  return { path: '/v1/chat/completions', body: JSON.stringify(body), wire: 'chat' };
}

function messages(model: string, stream: boolean): RequestSpec {
  const body: Record<string, unknown> = { model, max_tokens: 16, messages: MESSAGES };
  if (stream) body.stream = true;
  return { path: '/v1/messages', body: JSON.stringify(body), wire: 'messages' };
}

// A current model (claude-3-5-haiku-20241022 was retired on 2026-02-19 and is refused by the catalog).
const CLAUDE = 'anthropic/claude-haiku-4-5-20251001';
const GPT = 'openai/gpt-4o-mini';

export const SCENARIOS: readonly Scenario[] = [
  { name: 'chat', stream: false, translated: false, request: chat(GPT, false),
    description: 'chat-completions client -> OpenAI upstream (pass-through)' },
  { name: 'chat-stream', stream: true, translated: false, request: chat(GPT, true),
    description: 'same, stream: true' },
  { name: 'chat-to-anthropic', stream: false, translated: true, request: chat(CLAUDE, false),
    description: 'chat-completions client -> Anthropic upstream (gateway translates; baselines hit the upstream chat endpoint)' },
  { name: 'chat-to-anthropic-stream', stream: true, translated: true, request: chat(CLAUDE, true),
    description: 'same, stream: true' },
  { name: 'messages-to-openai', stream: false, translated: true, request: messages(GPT, false),
    description: 'messages client -> OpenAI upstream (gateway translates; baselines hit the upstream messages endpoint)' },
  { name: 'messages-to-openai-stream', stream: true, translated: true, request: messages(GPT, true),
    description: 'same, stream: true' },
];

/** Headers a real SDK client of that wire format would send, with the system's key when it has one. */
export function requestHeaders(system: System, wire: Wire): Record<string, string> {
  const key = system.apiKey ?? 'sk-bench';
  const h: Record<string, string> = { 'content-type': 'application/json', authorization: `Bearer ${key}` };
  if (wire === 'messages') { h['x-api-key'] = key; h['anthropic-version'] = '2023-06-01'; }
  return h;
}

/** User + system CPU milliseconds consumed so far by a process (Linux /proc; NaN elsewhere). */
export function cpuMs(child: ChildProcess | undefined): number {
  if (!child?.pid) return Number.NaN;
  try {
    const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[11], fields[12] are utime and stime (fields 14 and 15 of stat) in clock ticks (100/s).
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return Number.NaN;
  }
}
