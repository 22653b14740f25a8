// The state as it crosses from the training worker to the main thread. A full state is ~3.1 MB of
// JSON, 2.95 MB of it the stored prompts of the local correction (exemplars.ts): structured-cloning
// them and indexing them again on the main thread stalled the event loop for tens of ms per new
// version. Here the worker builds their similarity index and the state goes without them: the
// index's typed arrays are transferred (their buffers move, nothing is copied), so the main thread
// deserialises the small rest and compiles the additive tables only.
import { indexExemplars, type LocalIndex } from './exemplars.ts';
import type { Learned } from './train.ts';
import { STATE_SCHEMA, type QualityState } from './types.ts';

/** The local correction's index with the model numbering it was built with (outModel indexes `models`). */
export type PackedLocal = { models: string[]; index: LocalIndex };

/** learned of a packed state: the stored prompts left out, their index in their place. */
type PackedLearned = Omit<Learned, 'exemplars'> & { exemplars?: undefined; packedLocal: PackedLocal };

/** True for a state made by packState: it predicts like the original but cannot be trained on or stored. */
export function isPacked(state: QualityState): boolean {
  return (state.learned as Partial<PackedLearned>).packedLocal !== undefined;
}

/** The packed index of a state (undefined for an ordinary state). */
export function packedLocal(state: QualityState): PackedLocal | undefined {
  return (state.learned as Partial<PackedLearned>).packedLocal;
}

/**
 * `state` for the main thread: the same object shape without the stored prompts, their index (built
 * here, a fresh one: `state`'s own compiled tables are not touched) in `learned.packedLocal`, and the
 * buffers to pass as the message's transfer list. `state` itself is not modified. A state of another
 * schema or without stored prompts is returned as is (nothing to transfer).
 */
export function packState(state: QualityState): { state: QualityState; transfer: ArrayBuffer[] } {
  const L = state.learned as Learned;
  if (state.schema !== STATE_SCHEMA || !L.exemplars || L.exemplars.length === 0) return { state, transfer: [] };
  const models = Object.keys(L.model);
  const index = indexExemplars(L.exemplars, new Map(models.map((m, i) => [m, i])));
  const { exemplars: _dropped, ...rest } = L;
  const learned: PackedLearned = { ...rest, packedLocal: { models, index } };
  const transfer = [index.start, index.end, index.post, index.weight, index.idf, index.outStart, index.outModel, index.outN, index.outR].map((a) => a.buffer as ArrayBuffer);
  return { state: { ...state, learned }, transfer };
}

/**
 * The packed index renumbered for `modelIndex` (the numbering predict compiled for this state; the
 * same order unless the state's model table was rebuilt in between). Outcomes of models not in it
 * are dropped, as indexExemplars does.
 */
export function localFromPacked(p: PackedLocal, modelIndex: ReadonlyMap<string, number>): LocalIndex {
  const ix = p.index;
  if (p.models.length === modelIndex.size && p.models.every((m, i) => modelIndex.get(m) === i)) return ix;
  const map = Int32Array.from(p.models, (m) => modelIndex.get(m) ?? -1);
  const outStart = new Int32Array(ix.n + 1);
  const keep: number[] = [];
  for (let x = 0; x < ix.n; x++) {
    outStart[x] = keep.length;
    for (let o = ix.outStart[x]!; o < ix.outStart[x + 1]!; o++) if (map[ix.outModel[o]!]! >= 0) keep.push(o);
  }
  outStart[ix.n] = keep.length;
  return {
    ...ix, outStart,
    outModel: Int32Array.from(keep, (o) => map[ix.outModel[o]!]!),
    outN: Float64Array.from(keep, (o) => ix.outN[o]!),
    outR: Float64Array.from(keep, (o) => ix.outR[o]!),
  };
}
