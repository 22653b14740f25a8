// Starts the real gateway (`src/main.ts serve`) as a child process against the bench upstream,
// optionally creating an API key first; any failure becomes a reason string, never a crash.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { benchPath } from './child.ts';

export type GatewayOptions = {
  /** Config file, absolute or relative to bench/. */
  config: string;
  /** Upstream origin, e.g. http://127.0.0.1:1234 (the providers get `<origin>/v1`). */
  upstream: string;
  /** Create an API key with `keys create` before serving and return it. */
  withKey: boolean;
  /** Sets DATABASE_URL (PostgreSQL records) when given. */
  databaseUrl?: string;
  /**
   * The PostgreSQL schema (GATEWAY_PG_SCHEMA). The bench gives each run a fresh one and drops it at the
   * end (dropPgSchema): rows left by earlier runs would otherwise grow the tables and wake autovacuum
   * in the middle of a measurement.
   */
  pgSchema?: string;
  /** Write a V8 CPU profile of the gateway into this directory (written when it exits on SIGTERM). */
  profileDir?: string;
  /** Extra environment (e.g. repo-config.ts everyProviderKey(), for router decisions over the whole catalog). */
  env?: Record<string, string>;
  /** Extra flags for the gateway's node (e.g. --trace-gc). */
  nodeFlags?: string[];
  /** Run the gateway of another checkout (its src/main.ts), e.g. a baseline commit in a git worktree. */
  repo?: string;
};

export type Gateway = { child: ChildProcess; origin: string; apiKey?: string; dbFile: string; stderrTail: () => string };

const REPO = benchPath('..');
// Generous: on a busy shared machine a gateway loading the whole catalog took over 30 s to start.
const STARTUP_MS = 120_000;

function gatewayEnv(o: GatewayOptions, dbFile: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...o.env,
    GATEWAY_CONFIG: path.isAbsolute(o.config) ? o.config : benchPath(o.config),
    PORT: '0', HOST: '127.0.0.1', GATEWAY_DB: dbFile,
    OPENAI_BASE_URL: `${o.upstream}/v1`, OPENAI_API_KEY: 'sk-bench',
    ANTHROPIC_BASE_URL: `${o.upstream}/v1`, ANTHROPIC_API_KEY: 'sk-ant-bench',
  };
  if (o.databaseUrl) env.DATABASE_URL = o.databaseUrl;
  else delete env.DATABASE_URL;
  if (o.databaseUrl && o.pgSchema) env.GATEWAY_PG_SCHEMA = o.pgSchema;
  else delete env.GATEWAY_PG_SCHEMA;
  return env;
}

/** Keeps the last `max` characters written to a stream, for error messages. */
function tail(stream: NodeJS.ReadableStream | null, max = 2000): () => string {
  let text = '';
  stream?.on('data', (c: Buffer) => { text = (text + c.toString('utf8')).slice(-max); });
  return () => text.trim();
}

/**
 * Limits far above what the bench can reach: the per-key rate limiter runs on every request
 * (that cost is what we measure) but never refuses one.
 */
const KEY_LIMITS = ['--rpm', '100000000', '--tpm', '2000000000']; // tpm fits a PostgreSQL int4

/** Runs `src/main.ts keys create --name bench --rpm .. --tpm ..` and returns the `sk-gw-...` key it prints (anywhere in its output). */
function createKey(env: NodeJS.ProcessEnv): Promise<string> {
  const args = ['src/main.ts', 'keys', 'create', '--name', 'bench', ...KEY_LIMITS];
  const child = spawn(process.execPath, args, { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const out = tail(child.stdout, 10_000);
  const err = tail(child.stderr);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error('keys create timed out')); }, STARTUP_MS);
    child.on('exit', (code) => {
      clearTimeout(timer);
      const key = /\b(sk-gw-[A-Za-z0-9_.-]+)/.exec(out())?.[1];
      if (code === 0 && key) resolve(key);
      else reject(new Error(`keys create exited with ${code}: ${(err() || out()).split('\n').slice(-3).join(' | ')}`));
    });
  });
}

/**
 * Starts the gateway and resolves once it printed `listening on http://...`. Rejects with a
 * readable reason when it exits, times out or the key cannot be created.
 */
export async function startGateway(o: GatewayOptions): Promise<Gateway> {
  const dbFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'gw-bench-')), 'gateway.db');
  const env = gatewayEnv(o, dbFile);
  const apiKey = o.withKey ? await createKey(env) : undefined;
  // process.execPath is the Node 26 running this bench (node_modules/.bin/node resolves to it);
  // spawning it directly means the pid we signal is the gateway itself, not a wrapper.
  const prof = o.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${o.profileDir}`] : [];
  const child = spawn(process.execPath, [...prof, ...(o.nodeFlags ?? []), 'src/main.ts', 'serve'], { cwd: o.repo ?? REPO, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const stderrTail = tail(child.stderr);
  const origin = await new Promise<string>((resolve, reject) => {
    let buffered = '';
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`no "listening on" line within ${STARTUP_MS} ms`)); }, STARTUP_MS);
    const onExit = (code: number | null): void => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code}: ${stderrTail().split('\n').slice(-4).join(' | ') || buffered.slice(-300)}`));
    };
    child.once('exit', onExit);
    child.stdout!.on('data', (c: Buffer) => {
      // The pipe is drained for the whole run: a full pipe would block a gateway that logs.
      buffered = (buffered + c.toString('utf8')).slice(-4000);
      const m = /listening on (http:\/\/[^\s/]+)/.exec(buffered);
      if (m) {
        clearTimeout(timer);
        child.off('exit', onExit);
        buffered = '';
        child.stdout!.removeAllListeners('data');
        child.stdout!.resume();
        resolve(m[1]!);
      }
    });
  });
  return apiKey === undefined ? { child, origin, dbFile, stderrTail } : { child, origin, apiKey, dbFile, stderrTail };
}

/** A schema name for this run's PostgreSQL gateway. */
export const benchPgSchema = (): string => `bench_${process.pid}_${Date.now()}`;

/** Drops a schema a bench run created (never throws: the report matters more than the clean-up). */
export async function dropPgSchema(url: string, schema: string): Promise<void> {
  if (!/^bench_\d+_\d+$/.test(schema)) return;
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } catch { /* reported nowhere on purpose */ } finally {
    await client.end().catch(() => {});
  }
}
