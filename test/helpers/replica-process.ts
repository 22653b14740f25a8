// Drives a limiter replica running in a child process (test/helpers/limiter-replica.ts): a test can
// have it take and settle reservations, then kill it (SIGKILL) or freeze and thaw it (SIGSTOP, SIGCONT).
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { KeyRecord } from '../../src/store/types.ts';
import { NODE } from './process.ts';

const SCRIPT = join(import.meta.dirname, 'limiter-replica.ts');

export type ReplicaProcess = {
  pid: number;
  /** Takes a reservation; resolves with its id, or the refusal's message. */
  acquire(key: KeyRecord, costUsd: string): Promise<{ id: number } | { error: string }>;
  settle(id: number, costUsd: string): Promise<void>;
  release(id: number): Promise<void>;
  signal(sig: NodeJS.Signals): void;
  /** SIGKILL (after SIGCONT, in case it is frozen) and wait for the exit. */
  kill(): Promise<void>;
};

type Answer = { id: number; ok: boolean; error?: string };

export async function spawnReplica(o: { redisUrl: string; prefix: string; presenceMs: number; leaseMs: number; releasedKeepMs?: number }): Promise<ReplicaProcess> {
  const child: ChildProcess = spawn(NODE, [SCRIPT], {
    env: {
      PATH: process.env.PATH ?? '', LIMITER_REDIS_URL: o.redisUrl, LIMITER_PREFIX: o.prefix,
      LIMITER_PRESENCE_MS: String(o.presenceMs), LIMITER_LEASE_MS: String(o.leaseMs),
      ...(o.releasedKeepMs === undefined ? {} : { LIMITER_RELEASED_KEEP_MS: String(o.releasedKeepMs) }),
    },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const waiting = new Map<number, (a: Answer) => void>();
  let ready!: () => void;
  const isReady = new Promise<void>((ok) => { ready = ok; });
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const a = JSON.parse(line) as Answer & { ready?: boolean };
    if (a.ready) { ready(); return; }
    waiting.get(a.id)?.(a);
    waiting.delete(a.id);
  });
  const exited = once(child, 'exit');
  await Promise.race([isReady, exited.then(() => { throw new Error('limiter replica exited before it was ready'); })]);
  let seq = 0;
  const send = (c: Record<string, unknown>): Promise<Answer> => {
    const id = ++seq;
    const answered = new Promise<Answer>((ok) => waiting.set(id, ok));
    child.stdin!.write(`${JSON.stringify({ ...c, id })}\n`);
    return answered;
  };
  return {
    pid: child.pid!,
    acquire: async (key, costUsd) => {
      const a = await send({ op: 'acquire', key, costUsd });
      return a.ok ? { id: a.id } : { error: a.error ?? '' };
    },
    settle: async (id, costUsd) => { await send({ op: 'settle', of: id, costUsd }); },
    release: async (id) => { await send({ op: 'release', of: id }); },
    signal: (sig) => { child.kill(sig); },
    kill: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGCONT');
      child.kill('SIGKILL');
      await exited;
    },
  };
}
