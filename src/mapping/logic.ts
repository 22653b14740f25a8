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
  const f = compileExpr(rule);
  return (data) => truthy(f(data));
}

type Expr = (data: LogicData) => unknown;

/** json-logic truthiness: like JavaScript's, except that an empty array is false. */
const truthy = (v: unknown): boolean => (Array.isArray(v) ? v.length > 0 : Boolean(v));

const NOT_FOUND = Symbol('not found');

const isObject = (v: unknown): v is object => v !== null && typeof v === 'object';

/**
 * An object operand as JavaScript's comparisons, `in` on a string and `cat` convert it (its string:
 * for JSON data the two conversions agree), or NaN when it cannot be converted: JSON can give an
 * object an own `toString` that is not a function (`{"toString": 1}`), which would throw a TypeError
 * in the middle of a request (a router policy reading the client's `extra.*`, a mapping row reading
 * `body.*`). NaN equals nothing and orders against nothing, so such a value fails every test.
 */
function coerced(v: object): unknown {
  try { return String(v); } catch { return NaN; }
}

/** A comparison operand: primitives as they are, objects as coerced() converts them. */
const operand = (v: unknown): unknown => (isObject(v) ? coerced(v) : v);

/** `==` made safe: two objects compare by identity (no conversion), an object against a primitive by its conversion. */
const looseEq = (x: unknown, y: unknown): boolean => (isObject(x) === isObject(y) ? x == y : operand(x) == operand(y));

function readVar(data: unknown, path: string): unknown {
  return readKeys(data, path.split('.'));
}

function readKeys(data: unknown, keys: readonly string[]): unknown {
  let cur: unknown = data;
  for (const k of keys) {
    if (cur === null || cur === undefined) return NOT_FOUND;
    cur = (cur as Record<string, unknown>)[k];
    if (cur === undefined) return NOT_FOUND;
  }
  return cur;
}

/**
 * Turns a rule into nested closures once, at load time, so a request evaluates plain function calls
 * instead of re-interpreting the rule tree. Semantics follow json-logic-js (tested against it);
 * rarely used operations delegate to the library.
 */
function compileExpr(rule: unknown): Expr {
  if (Array.isArray(rule)) { const items = rule.map(compileExpr); return (d) => items.map((f) => f(d)); }
  if (rule === null || typeof rule !== 'object') return () => rule;
  const op = Object.keys(rule)[0]!;
  const raw = (rule as Record<string, unknown>)[op];
  const args = (Array.isArray(raw) ? raw : [raw]).map(compileExpr);
  const [a = () => undefined, b = () => undefined, c] = args;
  /* eslint-disable eqeqeq */
  switch (op) {
    case 'var': {
      // A constant name (the usual case) is split once here, not on every evaluation.
      const name = Array.isArray(raw) ? raw[0] : raw;
      if (typeof name === 'string' && name !== '') {
        const keys = name.split('.');
        return (d) => {
          const v = readKeys(d, keys);
          if (v !== NOT_FOUND) return v;
          const fallback = b(d);
          return fallback === undefined ? null : fallback;
        };
      }
      return (d) => {
        const p = a(d);
        if (p === undefined || p === null || p === '') return d;
        const v = readVar(d, String(p));
        if (v !== NOT_FOUND) return v;
        const fallback = b(d);
        return fallback === undefined ? null : fallback;
      };
    }
    case '==': return (d) => looseEq(a(d), b(d));
    case '===': return (d) => a(d) === b(d);
    case '!=': return (d) => !looseEq(a(d), b(d));
    case '!==': return (d) => a(d) !== b(d);
    case '!': return (d) => !truthy(a(d));
    case '!!': return (d) => truthy(a(d));
    case 'or': return (d) => { let v: unknown; for (const f of args) { v = f(d); if (truthy(v)) return v; } return v; };
    case 'and': return (d) => { let v: unknown; for (const f of args) { v = f(d); if (!truthy(v)) return v; } return v; };
    case 'if': case '?:': return (d) => {
      let i = 0;
      for (; i + 1 < args.length; i += 2) if (truthy(args[i]!(d))) return args[i + 1]!(d);
      return i < args.length ? args[i]!(d) : null;
    };
    case '<': return c ? (d) => { const y = operand(b(d)) as number; return (operand(a(d)) as number) < y && y < (operand(c(d)) as number); } : (d) => (operand(a(d)) as number) < (operand(b(d)) as number);
    case '<=': return c ? (d) => { const y = operand(b(d)) as number; return (operand(a(d)) as number) <= y && y <= (operand(c(d)) as number); } : (d) => (operand(a(d)) as number) <= (operand(b(d)) as number);
    case '>': return (d) => (operand(a(d)) as number) > (operand(b(d)) as number);
    case '>=': return (d) => (operand(a(d)) as number) >= (operand(b(d)) as number);
    case 'in': return (d) => {
      const hay = b(d);
      if (Array.isArray(hay)) return hay.indexOf(a(d)) !== -1; // strict equality: nothing converted
      return typeof hay === 'string' && hay !== '' && hay.indexOf(operand(a(d)) as string) !== -1;
    };
    case 'starts_with': return (d) => { const s = a(d); const p = b(d); return typeof s === 'string' && typeof p === 'string' && s.startsWith(p); };
    case 'cat': return (d) => args.map((f) => operand(f(d))).join(''); // join, as the library does: null and undefined become ''
    default: {
      // missing, missing_some, substr and arithmetic: rare in conditions; the library evaluates them.
      // A value it cannot convert (see coerced) gives null, json-logic's nothing, instead of a TypeError mid-request.
      return (d) => { try { return jsonLogic.apply(rule as jsonLogic.RulesLogic, d); } catch (e) { if (e instanceof TypeError) return null; throw e; } };
    }
  }
}
