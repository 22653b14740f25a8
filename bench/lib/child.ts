// Child-process plumbing for the benchmarks: every server under test and the load generator
// run in their own process, so none of them shares an event loop with another.
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

export type ReadyMessage = { type: 'ready'; port: number };

/** True when the module at `metaUrl` is the script Node was started with. */
export function isMainModule(metaUrl: string): boolean {
  return process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(metaUrl);
}

/** Tells the parent (over IPC when forked, else on stdout) that the server listens on `port`. */
export function announceReady(port: number): void {
  if (process.send) process.send({ type: 'ready', port } satisfies ReadyMessage);
  else console.log(`listening on http://127.0.0.1:${port}`);
  // A forked server ends when its parent goes away, even if the parent was killed.
  process.on('disconnect', () => process.exit(0));
  // Exit normally on SIGTERM so a `--cpu-prof` run writes its profile.
  process.on('SIGTERM', () => process.exit(0));
}

/**
 * Forks a bench module (a .ts file under bench/) and waits for its ready message.
 * Rejects if the child exits or stays silent for `timeoutMs`.
 */
export function forkServer(modulePath: string, args: string[] = [], timeoutMs = 15_000, execArgv: string[] = []): Promise<{ child: ChildProcess; port: number }> {
  const child = fork(modulePath, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: [...process.execArgv, ...execArgv] });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { child.kill(); reject(new Error(`${path.basename(modulePath)} did not start in ${timeoutMs} ms`)); }, timeoutMs);
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`${path.basename(modulePath)} exited with ${code}`)); });
    child.on('message', (msg: unknown) => {
      const m = msg as Partial<ReadyMessage>;
      if (m.type === 'ready' && typeof m.port === 'number') {
        clearTimeout(timer);
        child.removeAllListeners('exit');
        resolve({ child, port: m.port });
      }
    });
  });
}

/** Stops a child started by this bench: SIGTERM, then SIGKILL after `graceMs`. */
export async function stopChild(child: ChildProcess, graceMs = 3_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Absolute path of a file under bench/ (this file lives in bench/lib/). */
export function benchPath(...parts: string[]): string {
  return path.join(path.dirname(fileURLToPath(import.meta.url)), '..', ...parts);
}
