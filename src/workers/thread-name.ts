// Names the calling thread as the OS shows it (top -H, ps -L, /proc/<pid>/task/*/comm), so an
// operator (and bench/router.ts) can tell the store writer from the router's worker from a conversion
// thread: Node names every worker "WorkerThread". Linux only; elsewhere, or where /proc is not
// writable, it does nothing; on the main thread too (a worker module imported there for its inline
// path must not rename the event loop). The name is cut to the kernel's 15 bytes.
import { writeFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';

export function nameThread(name: string): void {
  if (isMainThread || process.platform !== 'linux') return;
  // A synchronous write runs on the calling thread, so thread-self is this worker's own thread.
  try { writeFileSync('/proc/thread-self/comm', name.slice(0, 15)); } catch { /* a name is a convenience */ }
}
