// Piscina worker of the router: its storage and learning off the event loop. Tasks run on the
// worker's own store connection (opened on first use): recorded decisions are finished (rounded,
// serialised) and inserted here, the retention pass deletes here, and a training pass reads the new
// feedback and answers, trains and stores the next state here; only a new state goes back, packed
// (the stored prompts' index built here and transferred, the prompts themselves left here).
import { workerData } from 'node:worker_threads';
import { move, transferableSymbol, valueSymbol } from 'piscina';
import { packState, train, type Outcome, type QualityState, type TrainOptions } from '../router/quality/index.ts';
import { foldOutputs, type OutputTable } from '../router/output-stats.ts';
import { readChunk, type RowChunk } from '../router/decision-row.ts';
import { pruneRouterData, storeDecisions, type KeepStates, type StoredState } from '../router/store.ts';
import { emptyStored, newerState, trainPass, type TrainSettings } from '../router/train-pass.ts';
import { openStore, type OpenStoreOptions } from '../store/open.ts';
import type { Store } from '../store/types.ts';
import { nameThread } from './thread-name.ts';

nameThread('gw-router');

export type TrainTask = {
  quality: QualityState | null;
  output: OutputTable;
  outcomes: Outcome[];
  answers: Array<{ model: string; kind: string; outputTokens: number }>;
  options: TrainOptions;
};
export type TrainResult = { quality: QualityState; output: OutputTable };

/** The quality model's train plus the expected-output table: plain data in, plain data out. */
export function runTrain(t: TrainTask): TrainResult {
  const quality = t.outcomes.length > 0 || !t.quality ? train(t.outcomes, t.quality ?? undefined, t.options) : t.quality;
  return { quality, output: foldOutputs(t.output, t.answers) };
}

export type RouterTask =
  | { op: 'decisions'; chunk: RowChunk }
  | { op: 'prune'; decisionsDays: number | null; keep: KeepStates }
  /** The newest stored state when its version is above `after`, else null. */
  | { op: 'load'; after: number }
  /** A training pass on the newest stored state (LearnResult of src/router/backend.ts). */
  | { op: 'learn'; settings: TrainSettings }
  | { op: 'close' };

export type WorkerData = { store: OpenStoreOptions };

let store: Promise<Store> | null = null;
/** The newest state this worker knows (the base of its next training pass). */
let current: StoredState | null = null;

const storeOf = (): Promise<Store> => (store ??= openStore((workerData as WorkerData).store));

async function newest(s: Store): Promise<StoredState | null> {
  const next = await newerState(s.sql, current?.version ?? 0);
  if (next) current = next;
  return next;
}

/**
 * The task's answer with `s` for the main thread under `wrap`: its quality state packed
 * (src/router/quality/portable.ts) and the index buffers in the message's transfer list (piscina
 * transfers only a top-level movable value). `current` keeps the full state for the next pass.
 */
function forMain(s: StoredState, wrap: (s: StoredState) => object): unknown {
  const p = packState(s.quality);
  const value = wrap({ ...s, quality: p.state });
  return p.transfer.length === 0 ? value : move({ [transferableSymbol]: p.transfer, [valueSymbol]: value });
}

export default async function handle(t: RouterTask): Promise<unknown> {
  if (t.op === 'close') {
    const open = store;
    store = null;
    current = null;
    await (await open)?.close();
    return null;
  }
  const s = await storeOf();
  switch (t.op) {
    case 'decisions': return storeDecisions(s.sql, readChunk(t.chunk));
    case 'prune': return pruneRouterData(s.sql, t.decisionsDays, t.keep);
    case 'load': {
      await newest(s);
      return current && current.version > t.after ? forMain(current, (x) => x) : null;
    }
    case 'learn': {
      await newest(s);
      const base = current ?? emptyStored();
      const r = await trainPass(s.sql, base, t.settings, runTrain);
      if (r.next) { current = r.next; return forMain(r.next, (state) => ({ state, stored: true, more: r.more })); }
      const won = r.raced ? await newest(s) : null;
      return won ? forMain(won, (state) => ({ state, stored: false, more: false })) : { state: null, stored: false, more: false };
    }
  }
}
