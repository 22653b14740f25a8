// Pass 1 of a decision: the constraints that need neither quality nor cost (the key's
// allowed_models, capabilities, the context window, fixed policy rules). Its result depends on the
// candidate list, the key, the request's capability needs and the fixed rules' verdicts only, as long
// as the prompt fits every context window of the catalog, which its cheap upper bound shows without
// counting: then it is computed once per (config version, list, key, needs, verdicts) and copied.
import { CAP, type CandidateSet } from './candidates.ts';
import { C_CONTEXT, C_JSON, C_KEY, C_NATIVE, C_NATIVE_CHAT, C_NATIVE_MESSAGES, C_REASONING, C_TOOLS, C_VISION, POLICY } from './decision.ts';
import { countOf, type Run } from './figures.ts';
import type { FixedVerdicts } from './rule-cache.ts';

/** What pass 1 leaves, per position in the decision's candidate list. */
type Screened = { code: Int16Array; bonus: Float64Array; needed: Uint8Array; alive: readonly number[] };
type SetMemo = { minContext: number; byKey: Map<string, Screened> };

/** Combinations remembered per config version (lists, keys and `when` conditions make a few). */
const MAX_SCREENED = 256;
const MEMO = {};
let nextId = 1;
const ids = new WeakMap<object, number>();
const idOf = (o: object | null): number => {
  if (o === null) return 0;
  let id = ids.get(o);
  if (id === undefined) { id = nextId++; ids.set(o, id); }
  return id;
};

function memoOf(set: CandidateSet): SetMemo {
  let m = set.memo.get(MEMO) as SetMemo | undefined;
  if (!m) {
    let minContext = Infinity;
    for (let i = 0; i < set.all.length; i++) minContext = Math.min(minContext, set.table.contextWindow[i]!);
    m = { minContext, byKey: new Map() };
    set.memo.set(MEMO, m);
  }
  return m;
}

/**
 * Fills run.f.code (0: still in the running), run.f.bonus (fixed prefer rules) and run.f.needed (per
 * canonical model: a candidate of it is alive); returns the alive positions (read only).
 */
export function screen(run: Run, need: number, allowed: Uint8Array | null, verdicts: FixedVerdicts | null): readonly number[] {
  const { set, f, idx } = run;
  const m = memoOf(set);
  if (run.tokens.upper + 1 > m.minContext) return screenOnce(run, need, allowed, verdicts);
  const key = `${idOf(idx)}:${idOf(allowed)}:${idOf(verdicts)}:${need}`;
  let s = m.byKey.get(key);
  if (!s) {
    const alive = screenOnce(run, need, allowed, verdicts);
    const n = idx.length;
    s = { code: f.code.slice(0, n), bonus: f.bonus.slice(0, n), needed: f.needed.slice(0, set.refs.length), alive };
    if (m.byKey.size >= MAX_SCREENED) m.byKey.clear();
    m.byKey.set(key, s);
    return alive;
  }
  f.code.set(s.code);
  f.bonus.set(s.bonus);
  f.needed.set(s.needed);
  return s.alive;
}

function screenOnce(run: Run, need: number, allowed: Uint8Array | null, verdicts: FixedVerdicts | null): number[] {
  const { set, f, idx } = run;
  const T = set.table;
  const upper = run.tokens.upper;
  const alive: number[] = [];
  const neededRefs = f.needed;
  for (let j = 0; j < idx.length; j++) {
    const i = idx[j]!;
    let code = 0;
    const miss = need & ~T.caps[i]!;
    if (allowed !== null && allowed[i] === 0) code = C_KEY;
    else if (miss !== 0) {
      code = miss & (CAP.tools | CAP.manyTools | CAP.mcpToolChanges) ? C_TOOLS : miss & CAP.responsesApi ? C_NATIVE : miss & CAP.chatApi ? C_NATIVE_CHAT
        : miss & CAP.messagesApi ? C_NATIVE_MESSAGES
        : miss & CAP.vision ? C_VISION : miss & CAP.jsonSchema ? C_JSON : C_REASONING;
    }
    // The prompt's cheap upper bound spares counting every tokenizer just to know it fits.
    else if (upper + 1 > T.contextWindow[i]! && countOf(run, T.tok[i]!).tokens + 1 > T.contextWindow[i]!) code = C_CONTEXT;
    else if (verdicts !== null && verdicts.fail[i] !== 0) code = POLICY + verdicts.fail[i]! - 1;
    if (verdicts !== null && code === 0) f.bonus[j] = verdicts.bonus[i]!;
    f.code[j] = code;
    if (code === 0) { alive.push(j); neededRefs[T.ref[i]!] = 1; }
  }
  return alive;
}
