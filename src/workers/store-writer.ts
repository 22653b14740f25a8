// Worker entry of WriteThread (src/store/write-thread.ts): owns its own store connection and runs the
// writes (records, feedback, key last-used times, metric definitions, retention chunks), one message at a time,
// answering each with its result or its error's fields (code kept, so the writer can classify it).
import { parentPort, workerData } from 'node:worker_threads';
import { clearBodiesChunk, pruneRecordsChunk } from '../dashboard/retention.ts';
import { claimMetricDefs, type MetricClaim } from '../feedback/metric-store.ts';
import { fieldsOf } from '../store/errors.ts';
import { fromWire, type InferenceWire } from '../store/inference-wire.ts';
import { openStore, type OpenStoreOptions } from '../store/open.ts';
import type { FeedbackRow } from '../store/types.ts';
import type { WriteMessage } from '../store/write-thread.ts';
import { insertStoredResponse, type StoredResponseRow } from '../responses/rows.ts';
import { nameThread } from './thread-name.ts';

nameThread('gw-store');

const port = parentPort!;
const store = await openStore(workerData as OpenStoreOptions).catch((e: unknown) => {
  port.postMessage({ ready: false, error: (e as Error).message });
  throw e;
});
port.postMessage({ ready: true });

async function run(m: WriteMessage): Promise<unknown> {
  switch (m.kind) {
    case 'inferences': return store.insertInferences((m.args as InferenceWire[]).map(fromWire));
    case 'feedback': return store.insertFeedback(m.args as FeedbackRow[]);
    case 'touch': return store.touchKeys(m.args as Array<{ id: string; at: string }>);
    case 'claimMetrics': {
      const [scope, wanted] = m.args as [string, MetricClaim[]];
      return [...(await claimMetricDefs(store.sql, scope, wanted))];
    }
    case 'storedResponse': return insertStoredResponse(store.sql, m.args[0] as StoredResponseRow);
    case 'pruneRecords': return pruneRecordsChunk(store.sql, m.args[0] as string);
    case 'clearBodies': return clearBodiesChunk(store.sql, m.args[0] as string);
    case 'close': return store.close();
  }
}

let chain = Promise.resolve();
port.on('message', (m: WriteMessage) => {
  chain = chain.then(async () => {
    try {
      port.postMessage({ id: m.id, value: await run(m) });
    } catch (e) {
      port.postMessage({ id: m.id, error: fieldsOf(e) });
    }
  });
});
