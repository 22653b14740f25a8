// What a decision shows of a policy's rules: each rule's constraint name (`policy:<name>`, the key of
// excludedBy and of the recorded groups) and the reason an excluded candidate gives. They depend on the
// compiled policy only, so they are made once per policy, not as new strings in every decision; a
// reload compiles new policy objects, which get their own (the WeakMap lets the old ones go).
import type { CompiledPolicy } from './policy.ts';

/** Per rule of a policy (index = rule index). */
export type RuleWords = { names: readonly string[]; reasons: readonly string[] };

const made = new WeakMap<CompiledPolicy, RuleWords>();

export function ruleWords(policy: CompiledPolicy): RuleWords {
  let w = made.get(policy);
  if (!w) {
    w = {
      names: policy.rules.map((r) => `policy:${r.name}`),
      reasons: policy.rules.map((r) => (r.action === 'require' ? `fails required policy rule ${r.name}` : `excluded by policy rule ${r.name}`)),
    };
    made.set(policy, w);
  }
  return w;
}
