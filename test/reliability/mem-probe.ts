// Loaded into a gateway child with NODE_OPTIONS=--import (the soak test only): appends the process's
// memory and open file descriptors as one JSON line per second to $MEM_PROBE_FILE (RSS and descriptors
// are the whole process's; the heap is the main thread's).
import { appendFileSync, readdirSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';

const file = process.env.MEM_PROBE_FILE;
// NODE_OPTIONS reaches the gateway's worker threads too: only the main thread samples (its heap is the one that serves).
if (file && isMainThread) {
  const sample = (): void => {
    const m = process.memoryUsage();
    let fds = -1;
    try { fds = readdirSync('/proc/self/fd').length; } catch { /* not Linux */ }
    appendFileSync(file, `${JSON.stringify({ t: Date.now(), rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, arrayBuffers: m.arrayBuffers, fds })}\n`);
  };
  setInterval(sample, 1000).unref();
  sample();
}
