// Results that depend only on a config version's candidates and the caller's key, computed once and
// reused by every request of that key: which candidates the key's allowed_models admit, and what
// each fixed policy rule (PolicyRule.fixed: it reads candidate attributes and key fields only) says
// of each candidate. Kept on the CandidateSet (one per config version) in a WeakMap per key record:
// the key ring replaces a record when it reloads it, so a changed key is evaluated afresh.
import { compileModelPatterns } from '../auth/keys.ts';
import type { KeyRecord } from '../store/types.ts';
import type { CandidateSet } from './candidates.ts';
import type { CompiledPolicy } from './policy.ts';

type KeyMemo = { allows: Uint8Array | null | undefined; rules: Map<CompiledPolicy, PolicyMemo> };
type PolicyMemo = { hits: Array<Uint8Array | null>; verdicts: Map<string, FixedVerdicts> };

/**
 * What a set of active rules, all fixed, says of every candidate: `fail` is 1 + the index of the
 * first active rule it fails (0: none), `bonus` the weights of the prefer rules it satisfies.
 */
export type FixedVerdicts = { fail: Int16Array; bonus: Float64Array };

/** Sets of active rules remembered per (version, policy, key): `when` conditions make a few combinations. */
const MAX_VERDICTS = 64;

/** Requests without a key share one memo. */
const NO_KEY = {};

function memoOf(set: CandidateSet, key: KeyRecord | null): KeyMemo {
  const k = key ?? NO_KEY;
  let m = set.memo.get(k) as KeyMemo | undefined;
  if (!m) { m = { allows: undefined, rules: new Map() }; set.memo.set(k, m); }
  return m;
}

/** 1 where the key's allowed_models admit the candidate; null when the key restricts nothing. */
export function allowedBy(set: CandidateSet, key: KeyRecord | null): Uint8Array | null {
  if (!key || key.allowedModels.length === 0) return null;
  const m = memoOf(set, key);
  if (m.allows === undefined) {
    const allows = compileModelPatterns(key.allowedModels);
    m.allows = Uint8Array.from(set.all, (c) => (allows(c.id) ? 1 : 0));
  }
  return m.allows;
}

/** The key as policies see it (`key.*`). */
export function keyData(key: KeyRecord | null): Record<string, unknown> {
  return { id: key?.id ?? null, name: key?.name ?? null, tags: (key as { tags?: Record<string, string> } | null)?.tags ?? {} };
}

/**
 * Per rule of the policy: for a fixed rule, its test's result (1/0) on every candidate; null for a
 * rule evaluated per request. Computed on first use per (version, policy, key).
 */
export function fixedRuleHits(set: CandidateSet, policy: CompiledPolicy, key: KeyRecord | null): Array<Uint8Array | null> {
  return policyMemo(set, policy, key).hits;
}

function policyMemo(set: CandidateSet, policy: CompiledPolicy, key: KeyRecord | null): PolicyMemo {
  const m = memoOf(set, key);
  let p = m.rules.get(policy);
  if (!p) {
    const data: Record<string, unknown> = { key: keyData(key), candidate: null };
    const hits = policy.rules.map((r) => {
      if (!r.fixed) return null;
      return Uint8Array.from(set.all, (c) => { data.candidate = c.policyView; return r.test(data) ? 1 : 0; });
    });
    p = { hits, verdicts: new Map() };
    m.rules.set(policy, p);
  }
  return p;
}

/** The verdicts of the active rules `active` (indices into policy.rules, every one fixed), per candidate. */
export function fixedVerdicts(set: CandidateSet, policy: CompiledPolicy, key: KeyRecord | null, active: readonly number[]): FixedVerdicts {
  const p = policyMemo(set, policy, key);
  // Active rules come in rule order: as many as the policy has is all of them (the usual case, no `when`), no list to join.
  const k = active.length === policy.rules.length ? '*' : active.join(',');
  let v = p.verdicts.get(k);
  if (!v) {
    const n = set.all.length;
    v = { fail: new Int16Array(n), bonus: new Float64Array(n) };
    for (let i = 0; i < n; i++) {
      for (const r of active) {
        const rule = policy.rules[r]!;
        const hit = p.hits[r]![i] === 1;
        if ((rule.action === 'exclude' && hit) || (rule.action === 'require' && !hit)) { v.fail[i] = r + 1; break; }
        if (rule.action === 'prefer' && hit) v.bonus[i] = v.bonus[i]! + rule.weight;
      }
    }
    if (p.verdicts.size >= MAX_VERDICTS) p.verdicts.clear();
    p.verdicts.set(k, v);
  }
  return v;
}
