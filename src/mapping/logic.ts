// json-logic conditions for mapping rows (and later router policies): checked at load time against
// a whitelist of operations and variables, so a typo fails `check`, never a request.
import jsonLogic from 'json-logic-js';

jsonLogic.add_operation('starts_with', (s: unknown, prefix: unknown) =>
  typeof s === 'string' && typeof prefix === 'string' && s.startsWith(prefix));

const OPERATIONS = new Set([
  '==', '===', '!=', '!==', '!', '!!', 'or', 'and', 'if', '?:', '<', '<=', '>', '>=', 'in', 'var',
  'missing', 'missing_some', '+', '-', '*', '/', '%', 'min', 'max', 'cat', 'substr', 'starts_with',
]);

export type LogicData = Record<string, unknown>;
export type Predicate = (data: LogicData) => boolean;

/**
 * Validates a rule; returns a list of problems (empty when valid). `vars` are the allowed root
 * variable names (a var `body.temperature` has root `body`).
 */
export function checkRule(rule: unknown, vars: readonly string[], path = ''): string[] {
  if (rule === null || typeof rule !== 'object') return [];
  if (Array.isArray(rule)) return rule.flatMap((r, i) => checkRule(r, vars, `${path}[${i}]`));
  const keys = Object.keys(rule);
  if (keys.length !== 1) return [`${path || 'rule'}: a json-logic operation is an object with exactly one key, got ${keys.length}`];
  const op = keys[0]!;
  if (!OPERATIONS.has(op)) return [`${path || 'rule'}: unknown json-logic operation "${op}"`];
  const arg = (rule as Record<string, unknown>)[op];
  if (op === 'var') {
    const name = Array.isArray(arg) ? arg[0] : arg;
    if (typeof name !== 'string') return [`${path}.var: variable name must be a string`];
    const root = name.split('.')[0]!;
    if (!vars.includes(root)) return [`${path}.var: unknown variable "${name}" (known: ${vars.join(', ')})`];
    return [];
  }
  return checkRule(arg, vars, `${path}.${op}`);
}

/** Compiles a validated rule into a predicate (json-logic truthiness). */
export function compileRule(rule: unknown): Predicate {
  if (rule === undefined) return () => true;
  return (data) => jsonLogic.truthy(jsonLogic.apply(rule as jsonLogic.RulesLogic, data));
}
