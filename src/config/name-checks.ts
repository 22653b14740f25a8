// Names the config gives that the gateway shows back (provider ids and names, model names declared in a
// provider file, router policy and rule names): refused at load when they hold control, invisible or
// text-direction characters (src/util/visible-name.ts), as key and user names are by the admin API.
import { invisibleNameProblem } from '../util/visible-name.ts';
import type { ConfigProblem, RawProvider } from './load.ts';

type Obj = Record<string, unknown>;

/** JSON Pointer escaping of one path segment (a policy name may hold "/" or "~"). */
const seg = (s: string): string => s.replace(/~/g, '~0').replace(/\//g, '~1');

function check(out: ConfigProblem[], file: string, path: string, what: string, v: unknown): void {
  if (typeof v !== 'string') return;
  const p = invisibleNameProblem(what, v);
  if (p !== null) out.push({ file, path, message: p });
}

/** A provider file's id, name and the names of the models it declares. */
export function providerNameProblems(doc: RawProvider, file: string): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  check(out, file, '/id', 'a provider id', doc.id);
  check(out, file, '/name', 'a provider name', doc.name);
  (doc.models ?? []).forEach((m, i) => check(out, file, `/models/${i}/name`, 'a model name', m.name));
  return out;
}

/** gateway.yaml's router policy names and rule names. */
export function policyNameProblems(gateway: Obj, file: string): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  const router = (gateway.router ?? {}) as Obj;
  for (const [name, rules] of Object.entries((router.policies ?? {}) as Record<string, unknown>)) {
    check(out, file, `/router/policies/${seg(name)}`, 'a policy name', name);
    if (Array.isArray(rules)) rules.forEach((r, i) => check(out, file, `/router/policies/${seg(name)}/${i}/name`, 'a rule name', (r as Obj | null)?.name));
  }
  return out;
}
