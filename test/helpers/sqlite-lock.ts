// Another process holding SQLite's write lock (BEGIN IMMEDIATE, as the CLI or a second replica does
// while it writes), and the longest pause of this process's event loop while a test runs.
import { spawn } from 'node:child_process';

/** Holds the write lock on the SQLite file `path` from a child process for `ms`; resolves once it is held. */
export async function holdSqliteLock(path: string, ms: number): Promise<{ released: Promise<void> }> {
  const child = spawn(process.execPath, ['-e', `
    const { DatabaseSync } = require('node:sqlite');
    const db = new DatabaseSync(process.argv[1], { timeout: 5000 });
    db.exec('BEGIN IMMEDIATE');
    process.stdout.write('held\\n');
    setTimeout(() => { db.exec('COMMIT'); db.close(); }, Number(process.argv[2]));
  `, path, String(ms)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const released = new Promise<void>((ok) => child.once('exit', () => ok()));
  await new Promise<void>((ok, fail) => {
    child.stdout!.once('data', () => ok());
    child.once('exit', (code) => fail(new Error(`the lock holder exited (${code}) before taking the lock`)));
  });
  return { released };
}

/** Runs `fn` while timing the event loop every 5 ms; its result and the longest gap seen, in ms. */
export async function longestLoopGap<T>(fn: () => Promise<T>): Promise<{ value: T; gapMs: number }> {
  let gapMs = 0;
  let last = performance.now();
  const ticker = setInterval(() => { const now = performance.now(); gapMs = Math.max(gapMs, now - last); last = now; }, 5);
  try {
    const value = await fn();
    return { value, gapMs: Math.max(gapMs, performance.now() - last) };
  } finally {
    clearInterval(ticker);
  }
}
