// What a stored response's insert costs the event loop, SQLite: the time ResponseStore.save() holds the
// calling thread, (a) inserting on the main connection (what it did before: serialise the input items
// and the response, then node:sqlite's synchronous INSERT and commit) and (b) handing the row to the
// store's write thread (the request bytes cloned to the thread, which parses, serialises and inserts).
// Alternates the two per round; prints per-size medians and their ratio.
//   node_modules/.bin/node bench/responses-store-write.ts [--rounds 15]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ResponseStore } from '../src/responses/store.ts';
import { storedInputItems } from '../src/responses/rows.ts';
import { openStore } from '../src/store/open.ts';
import { WriteThread } from '../src/store/write-thread.ts';
import { uuidv7 } from '../src/util/uuid.ts';

const i = process.argv.indexOf('--rounds');
const rounds = i > 0 ? Number(process.argv[i + 1]) : 15;
const dir = mkdtempSync(join(tmpdir(), 'gw-store-bench-'));
const opts = { sqlitePath: join(dir, 'gw.db') };
const store = await openStore(opts);
const thread = new WriteThread(opts);
await thread.ready();
const onError = (e: unknown): void => { throw e; };
const inlineStore = new ResponseStore(store.sql, onError);
const threadStore = new ResponseStore(store.sql, onError, thread.insertStoredResponse);

const text = 'lorem ipsum dolor sit amet '.repeat(74);
function request(bytes: number): { input: Record<string, unknown>[]; body: Buffer } {
  const input = Array.from({ length: Math.max(1, Math.ceil(bytes / (text.length + 60))) }, (_, k) => ({ role: k % 2 ? 'assistant' : 'user', content: `${k} ${text}` }));
  return { input, body: Buffer.from(JSON.stringify({ model: 'up/m', input, store: true })) };
}
const response = { object: 'response', status: 'completed', output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'ok', annotations: [] }] }] };

const sizes = [2 * 1024, 200 * 1024, 5 * 1024 * 1024];
const out: Record<string, { inline: number[]; thread: number[] }> = {};
for (const size of sizes) {
  const { input, body } = request(size);
  const o: { inline: number[]; thread: number[] } = out[size] = { inline: [], thread: [] };
  for (let r = -2; r < rounds; r++) { // two warm-up rounds
    for (const way of (r % 2 ? ['thread', 'inline'] : ['inline', 'thread']) as Array<'inline' | 'thread'>) {
      const id = uuidv7();
      const now = Date.now();
      const row = { id, keyId: '', createdAt: now, expiresAt: now + 60_000, previousId: null, response: { ...response, id } };
      const t0 = performance.now();
      // What the route does: items parsed on this thread are kept for reads; the request bytes go to the writer.
      if (way === 'inline') inlineStore.save({ ...row, inputItems: storedInputItems(input, id) });
      else threadStore.save({ ...row, inputItems: storedInputItems(input, id) }, body);
      const took = performance.now() - t0;
      await (way === 'inline' ? inlineStore : threadStore).settle();
      if (r >= 0) o[way].push(took);
    }
  }
}
const median = (xs: number[]): number => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]!; };
for (const size of sizes) {
  const o = out[size]!;
  const a = median(o.inline); const b = median(o.thread);
  console.log(`${String(size / 1024).padStart(6)} KB request: main-thread ms inline ${a.toFixed(3)}  via write thread ${b.toFixed(3)}  ratio ${(a / b).toFixed(1)}x`);
}
await thread.close();
await store.close();
rmSync(dir, { recursive: true, force: true });
