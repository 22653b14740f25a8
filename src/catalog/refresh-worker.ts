// Worker thread of a refresh in the server: reads the config files, fetches the sources and merges
// them off the event loop (the merge rebuilds every provider's catalog, about a second of CPU), and
// posts the plan back. The main thread stores and publishes it (src/catalog/refresher.ts).
import { parentPort, workerData } from 'node:worker_threads';
import { loadConfig } from '../config/load.ts';
import { compileConfig } from '../config/compile.ts';
import type { Env } from '../config/env.ts';
import type { StoredOverlay } from './overlay-store.ts';
import { computeRefresh } from './refresh.ts';
import { nameThread } from '../workers/thread-name.ts';

nameThread('gw-catalog');

type Input = { file: string; env: Env; previous: StoredOverlay | null };

const input = workerData as Input;
try {
  const raw = loadConfig(input.file, input.env);
  const plan = await computeRefresh(raw, compileConfig(raw, input.env), input.previous, input.env);
  parentPort!.postMessage({ ok: true, plan });
} catch (e) {
  parentPort!.postMessage({ ok: false, message: (e as Error).message });
}
