// Router mode's main-thread work for a coding agent's conversation, as it grows by a tool call and
// its result each turn (earlier turns are texts seen before: their token counts are cached): parsing
// the body, routing it over the whole catalog (decode, request view, affinity lookup, features,
// decision), and the pieces alone (decode, affinity lookup, affinity remember after the answer).
// Medians of 8 turns after 4, in ms, for conversations of 50k, 300k and 1M characters.
//   node_modules/.bin/node bench/router-agent.ts
import { benchPath } from './lib/child.ts';
import { compileConfig } from '../src/config/compile.ts';
import { loadConfig } from '../src/config/load.ts';
import { RouterService } from '../src/router/service.ts';
import { warmTokenizers } from '../src/tokens/index.ts';
import { parseAndValidate } from '../src/workers/convert-core.ts';
import { Affinity } from '../src/router/affinity.ts';
import { codecFor } from '../src/formats/registry.ts';
import { everyProviderKey } from './lib/repo-config.ts';
const env = { ...process.env, ...everyProviderKey() };
const cfg = compileConfig(loadConfig(benchPath('gateway.router.yaml'), env), env);
const all = { ...cfg, router: { ...cfg.router, defaultPolicy: null } };
const router = new RouterService({ sql: null, settings: () => all.router, isEjected: () => false });
await warmTokenizers();
const words = 'the gateway routes each prompt to the model that answers best within the budget while providers fail and recover function const return'.split(' ');
let seq = 0;
function text(chars: number) { let s = `${++seq} `; let i = seq; while (s.length < chars) { i = (i * 1103515245 + 12345) % 2147483648; s += words[i % words.length] + ((i >> 8) % 11 === 0 ? '.\n' : ' '); } return s; }
const system = text(15000);
const tools = Array.from({ length: 15 }, (_, i) => ({ name: `tool${i}`, description: text(800), input_schema: { type: 'object', properties: { a: { type: 'string' } } } }));
function conv(size: number) {
  const msgs: Array<Record<string, unknown>> = [];
  let n = 0;
  while (n < size) { const t = text(Math.min(8000, size / 20)); n += t.length; msgs.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${msgs.length}`, content: t }] }); msgs.push({ role: 'assistant', content: [{ type: 'tool_use', id: `t${msgs.length + 1}`, name: 'tool1', input: { a: 'x' } }] }); }
  msgs.push({ role: 'user', content: 'continue ' + seq++ });
  return { model: 'router', max_tokens: 32000, system, tools, messages: msgs };
}
const aff = new Affinity(300000, 10000);
// The first size twice: the first pass warms the JIT and is not printed.
for (const [pass, size] of [[0, 50_000], [1, 50_000], [1, 300_000], [1, 1_000_000]] as const) {
  const t: Record<string, number[]> = { parse: [], route: [], lookup: [], remember: [], decode: [] };
  const base = conv(size);
  for (let rep = 0; rep < 12; rep++) {
    base.messages.splice(base.messages.length - 1, 0, { role: 'assistant', content: [{ type: 'tool_use', id: `u${rep}`, name: 'tool1', input: { a: 'x' } }] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: `u${rep}`, content: text(3000) }] });
    const buf = Buffer.from(JSON.stringify(base));
    let t0 = performance.now();
    const body = parseAndValidate(buf, 'anthropic-messages', 64);
    t.parse.push(performance.now() - t0);
    t0 = performance.now();
    const req = codecFor('anthropic-messages').client!.decodeRequest(body);
    t.decode.push(performance.now() - t0);
    t0 = performance.now(); aff.lookup('k', req); t.lookup.push(performance.now() - t0);
    t0 = performance.now(); aff.remember('k', req, 'x', 1000); t.remember.push(performance.now() - t0);
    t0 = performance.now();
    const r = router.routeSliced(all, body, 'anthropic-messages', null, '/v1/messages', 'x' + rep);
    if (r instanceof Promise) await r;
    t.route.push(performance.now() - t0);
  }
  const med = (xs: number[]) => xs.slice(4).sort((a, b) => a - b)[4]!.toFixed(2);
  if (pass) console.log(`${size} chars (${Buffer.byteLength(JSON.stringify(conv(size)))} B): ` + Object.entries(t).map(([k, v]) => `${k} ${med(v)} ms`).join(', '));
}
await router.close();
