// Worker entry of WriteThread (src/store/write-thread.ts): owns its own store connection and runs
// the batched writes (records, feedback, key last-used times), one message at a time, answering each with its outcome.
import { parentPort, workerData } from 'node:worker_threads';
import { fromWire, type InferenceWire } from '../store/inference-wire.ts';
import { openStore, type OpenStoreOptions } from '../store/open.ts';
import type { FeedbackRow } from '../store/types.ts';

const port = parentPort!;
const store = await openStore(workerData as OpenStoreOptions).catch((e: unknown) => {
  port.postMessage({ ready: false, error: (e as Error).message });
  throw e;
});
port.postMessage({ ready: true });

let chain = Promise.resolve();
port.on('message', (m: { id: number; kind: 'inferences' | 'feedback' | 'touch' | 'close'; rows: unknown[] }) => {
  chain = chain.then(async () => {
    try {
      if (m.kind === 'inferences') await store.insertInferences((m.rows as InferenceWire[]).map(fromWire));
      else if (m.kind === 'feedback') await store.insertFeedback(m.rows as FeedbackRow[]);
      else if (m.kind === 'touch') await store.touchKeys(m.rows as Array<{ id: string; at: string }>);
      else await store.close();
      port.postMessage({ id: m.id });
    } catch (e) {
      port.postMessage({ id: m.id, error: (e as Error).message });
    }
  });
});
