// Runs the real gateway as a child process (`node src/main.ts serve`, what `npm start` runs) with its
// own environment, and waits for its `listening on http://...` line. Used by the durability and
// multi-process tests; every started child is killed in `stop()` if it is still alive.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { stringify } from 'yaml';
import { providerDoc, type TestProvider } from './gateway.ts';

export const ROOT = resolve(import.meta.dirname, '..', '..');
/** Node 26 from the project's devDependency (the machine's own `node` is older). */
export const NODE = join(ROOT, 'node_modules', '.bin', 'node');
export const MAIN = join(ROOT, 'src', 'main.ts');

export type GatewayProcess = {
  child: ChildProcess; url: string; pid: number;
  /** Everything the child printed so far (stdout and stderr interleaved). */
  output(): string;
  /** Resolves with the exit code and signal once the child has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Sends a signal (default SIGTERM) and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
};

/** Spawns `node src/main.ts serve` with `env` (added to a minimal environment) and waits for the listening line. */
export async function spawnGateway(configFile: string, env: Record<string, string> = {}, timeoutMs = 20_000): Promise<GatewayProcess> {
  const child = spawn(NODE, [MAIN, 'serve'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env, GATEWAY_CONFIG: configFile },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (s: string) => { out += s; });
  child.stderr!.setEncoding('utf8').on('data', (s: string) => { out += s; });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((ok) => {
    child.once('exit', (code, signal) => ok({ code, signal }));
  });
  const url = await new Promise<string>((ok, fail) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); fail(new Error(`gateway did not start within ${timeoutMs} ms:\n${out}`)); }, timeoutMs);
    const check = (): void => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) { clearTimeout(timer); child.stdout!.off('data', check); ok(m[1]!); }
    };
    child.stdout!.on('data', check);
    void exited.then((e) => { clearTimeout(timer); fail(new Error(`gateway exited (${e.code ?? e.signal}) before listening:\n${out}`)); });
  });
  const stop = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    return exited;
  };
  return { child, url, pid: child.pid!, output: () => out, exited, stop };
}

/** Runs `node src/main.ts <args>` (e.g. the `keys` command) to completion. */
export async function runCli(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(NODE, [MAIN, ...args], {
    cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = ''; let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => { stdout += s; });
  child.stderr.setEncoding('utf8').on('data', (s: string) => { stderr += s; });
  const code = await new Promise<number | null>((ok) => child.once('exit', (c) => ok(c)));
  return { code, stdout, stderr };
}

/**
 * Writes a gateway.yaml + providers/ into a fresh temp directory (same shape as startTestGateway)
 * for a child process; `gateway` overrides top-level sections. Returns the directory and config path.
 */
export function writeGatewayConfig(providers: TestProvider[], gateway: Record<string, unknown> = {}, dir = mkdtempSync(join(tmpdir(), 'gw-proc-'))): { dir: string; configFile: string; dbPath: string } {
  const providersDir = join(dir, 'providers');
  mkdirSync(providersDir, { recursive: true });
  for (const p of providers) writeFileSync(join(providersDir, `${p.id}.yaml`), stringify(providerDoc(p)));
  const dbPath = join(dir, 'gateway.db');
  const g = gateway;
  const doc = {
    version: 1,
    providers_dir: './providers',
    ...g,
    server: { host: '127.0.0.1', port: 0, shutdown_grace_ms: 10_000, ...(g.server as object | undefined) },
    auth: { enabled: false, ...(g.auth as object | undefined) },
    storage: { sqlite_path: dbPath, log_bodies: 'metadata', writer: { batch_size: 50, flush_ms: 20, max_queue: 10000 }, ...(g.storage as object | undefined) },
    upstream: { first_byte_timeout_ms: 5000, idle_timeout_ms: 5000, connect_timeout_ms: 1000, retry_after_cap_ms: 500, ...(g.upstream as object | undefined) },
    workers: { threads: 0, ...(g.workers as object | undefined) },
  };
  const configFile = join(dir, 'gateway.yaml');
  writeFileSync(configFile, stringify(doc));
  return { dir, configFile, dbPath };
}
