// A redis-server of a test's own on a free port (never the shared one on 6379), so a test may flush,
// pause (SIGSTOP: a hung server), kill and restart it. No persistence: a restart loses every key.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { once } from 'node:events';
import { Redis } from 'ioredis';

export type OwnRedis = {
  url: string;
  port: number;
  /** A client for the test's own checks. */
  client(): Redis;
  pause(): void;
  resume(): void;
  /** Kills the server (SIGKILL); restart() starts an empty one on the same port. */
  kill(): Promise<void>;
  restart(): Promise<void>;
  stop(): Promise<void>;
};

async function freePort(): Promise<number> {
  const s = createServer();
  s.listen(0, '127.0.0.1');
  await once(s, 'listening');
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((ok) => s.close(() => ok()));
  return port;
}

async function waitUp(port: number, child: ChildProcess): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`);
    const c = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
    c.on('error', () => {});
    try { await c.connect(); await c.ping(); return; } catch { /* not yet */ } finally { c.disconnect(); }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`redis-server on ${port} did not start`);
}

export async function startOwnRedis(): Promise<OwnRedis> {
  const port = await freePort();
  let child: ChildProcess;
  const clients: Redis[] = [];
  const launch = async (): Promise<void> => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'no'], { stdio: 'ignore' });
    await waitUp(port, child);
  };
  const kill = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const gone = once(child, 'exit');
    child.kill('SIGCONT');
    child.kill('SIGKILL');
    await gone;
  };
  await launch();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    client: () => { const c = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 1 }); c.on('error', () => {}); clients.push(c); return c; },
    pause: () => { child.kill('SIGSTOP'); },
    resume: () => { child.kill('SIGCONT'); },
    kill,
    restart: launch,
    stop: async () => { for (const c of clients) c.disconnect(); await kill(); },
  };
}
