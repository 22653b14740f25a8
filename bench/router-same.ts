// Whether two checkouts route identically: the same bodies (short and long prompts, tools, images,
// JSON schema, reasoning, cost bounds, model lists, conversations that build affinity), keys and
// policies (fixed, per-request, `when`, prefer, input_tokens) go through both trees' RouterService,
// with the same random draws for exploration; their decisions (every shown candidate's figures),
// headers, plans, recorded decisions, dry-run answers and 400s must be byte-identical.
// For changes meant to speed routing up without changing it.
// Run: node bench/router-same.ts --baseline DIR [--rounds N]   (SAME_DUMP=1 prints the start of each answer)
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { benchArgs } from './lib/args.ts';
import { benchPath } from './lib/child.ts';
import { everyProviderKey } from './lib/repo-config.ts';

const { values: f } = benchArgs({ options: { baseline: { type: 'string' }, rounds: { type: 'string', default: '3' } } });
if (!f.baseline) throw new Error('--baseline DIR: the checkout to compare with');

type Rec = Record<string, unknown>;
type Key = { id: string; name: string; hash: string; createdAt: string; lastUsedAt: null; expiresAt: null; revokedAt: null; allowedModels: string[]; budgetUsd: null; budgetPeriod: null; rpmLimit: null; tpmLimit: null };
const key = (name: string, allowedModels: string[] = []): Key => ({
  id: `id-${name}`, name, hash: 'x', createdAt: '2026-01-01T00:00:00Z', lastUsedAt: null, expiresAt: null, revokedAt: null,
  allowedModels, budgetUsd: null, budgetPeriod: null, rpmLimit: null, tpmLimit: null,
});
const keys: Array<Key | null> = [null, key('mixed-1'), key('when-1'), key('tokens-1'), key('plain-1', ['openai/*', 'anthropic/*'])];

/** The bench config with policies of every kind, a key's defaults and exploration on. */
function configText(root: string): string {
  const base = readFileSync(path.join(root, 'bench/gateway.router.yaml'), 'utf8')
    .replace('providers_dir: ../providers', `providers_dir: ${path.join(root, 'providers')}`)
    .replace('exploration: { share: 0 }', 'exploration: { share: 0.2 }');
  return `${base}
    mixed:
      - exclude: { "==": [{ var: candidate.provider }, azure] }
      - exclude: { "<": [{ var: candidate.quality }, 0.5] }
      - prefer: { "==": [{ var: candidate.model }, gpt-4o] }
        weight: 0.2
      - prefer: { "<": [{ var: candidate.expected_cost_usd }, 0.001] }
        weight: 0.05
      - require: { ">": [{ var: candidate.context_window }, 100000] }
        when: { "==": [{ var: request.stream }, true] }
    when:
      - name: frugal
        require: { "<": [{ var: candidate.price.input_per_million }, 1] }
        when: { "==": [{ var: extra.team }, frugal] }
    tokens:
      - exclude: { "and": [{ ">": [{ var: request.input_tokens }, 40] }, { "<": [{ var: candidate.context_window }, 200000] }] }
  key_policies: { "mixed-*": mixed, "when-*": when, "tokens-*": tokens, "plain-*": bench }
  key_defaults: { "when-*": { max_cost: 0.5 } }
`;
}

const words = 'the gateway routes each prompt to the model that answers best within the budget while providers fail and recover'.split(' ');
const prose = (chars: number, seed: number): string => {
  let s = ''; let i = seed;
  while (s.length < chars) { i = (i * 1103515245 + 12345) % 2147483648; s += words[i % words.length] + ((i >> 8) % 11 === 0 ? '.\n' : ' '); }
  return s;
};
const tool = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } };
const image = { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } };

/** [format, body] pairs; round r varies the text. */
function bodies(r: number): Array<[string, Rec]> {
  const u = (s: string) => [{ role: 'user', content: s }];
  const conv = [{ role: 'system', content: `You are terse. ${prose(600, r)}` }, { role: 'user', content: prose(3000, r + 1) }, { role: 'assistant', content: prose(800, r + 2) }];
  const out: Array<[string, Rec]> = [
    ['openai-chat', { model: 'router', messages: u(`Hello, how are you today? ${r}`) }],
    ['openai-chat', { model: 'router', models: ['gpt-4o-mini', 'gpt-4.1-mini', 'gpt-4o'], messages: u('Hello, how are you today?') }],
    ['openai-chat', { model: 'router', willingness_to_pay: 0.01, max_cost: 0.01, messages: u(`${r}: ${prose(900, r)}`) }],
    ['openai-chat', { model: 'router', max_cost: 0.00002, messages: u(`Tiny budget ${r}`) }],
    ['openai-chat', { model: 'router', max_cost: 1e-9, messages: u('Nothing fits') }],
    ['openai-chat', { model: 'router', max_cost_per_million_tokens: 2, max_tokens: 300, messages: u(`Per million ${r}`) }],
    ['openai-chat', { model: 'router', tools: [tool], messages: [{ role: 'system', content: 'You are a helpful assistant.' }, ...u(`Weather in Paris? (${r})`)] }],
    ['openai-chat', { model: 'router', messages: [{ role: 'user', content: [{ type: 'text', text: 'What is in this picture?' }, image] }] }],
    ['openai-chat', { model: 'router', response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object', properties: { a: { type: 'number' } } } } }, messages: u('Give me JSON') }],
    ['openai-chat', { model: 'router', reasoning_effort: 'high', stream: true, messages: u(`Prove that sqrt(2) is irrational. ${r}`) }],
    ['openai-chat', { model: 'router', extra: { team: 'frugal' }, metadata: { user: 'u1' }, messages: u(`def f(x):\n    return x * 2\n# fix this code ${r}`) }],
    ['openai-chat', { model: 'router', models: ['no-such-model'], messages: u('x') }],
    ['openai-chat', { model: 'router', willingness_to_pay: 0.5, messages: [...conv, ...u(`And then? ${r}`)] }],
    ['openai-chat', { model: 'router', willingness_to_pay: 0.5, messages: [...conv, ...u(`And then? ${r}`), { role: 'assistant', content: 'Then this.' }, ...u('More.')] }],
    ['openai-chat', { model: 'router', max_cost: 0.3, messages: u(`${r} ${prose(12_000, r)}`) }],
    ['openai-chat', { model: 'router', messages: u(`${r} ${prose(20_000, r + 7)}`) }],
    ['anthropic-messages', { model: 'router', max_tokens: 500, system: 'Be brief.', messages: u(`Explain monads. ${r}`) }],
    ['anthropic-messages', { model: 'router', max_tokens: 64, thinking: { type: 'enabled', budget_tokens: 32 }, messages: u('Think first.') }],
  ];
  return out;
}

type Side = {
  route(cfg: unknown, body: Rec, format: string, key: Key | null): Promise<string>;
  rank(cfg: unknown, body: Rec, format: string, key: Key | null): Promise<string>;
  cfg: unknown;
};

/** Everything a decision shows, as one string (Ranked without its candidate object). */
const shown = (x: unknown): string => JSON.stringify(x, (k, v) => (k === 'cand' ? undefined : k === 'candidate' && v && typeof v === 'object' && 'entry' in v ? (v as { id: string }).id : v instanceof Map ? [...v] : v));

async function sideOf(root: string, dir: string): Promise<Side> {
  const mod = async <T>(p: string): Promise<T> => await import(pathToFileURL(path.join(root, p)).href) as T;
  const { compileConfig } = await mod<typeof import('../src/config/compile.ts')>('src/config/compile.ts');
  const { loadConfig } = await mod<typeof import('../src/config/load.ts')>('src/config/load.ts');
  const { RouterService } = await mod<typeof import('../src/router/service.ts')>('src/router/service.ts');
  const { recordedDecision } = await mod<typeof import('../src/router/explain.ts')>('src/router/explain.ts');
  const { warmTokenizers } = await mod<typeof import('../src/tokens/index.ts')>('src/tokens/index.ts');
  const file = path.join(dir, `${path.basename(root)}.yaml`);
  writeFileSync(file, configText(root));
  const env = { ...process.env, ...everyProviderKey() };
  const cfg = compileConfig(loadConfig(file, env), env);
  const router = new RouterService({ sql: null, settings: () => cfg.router, isEjected: (p) => p === 'openrouter' });
  await warmTokenizers();
  let n = 0;
  return {
    cfg,
    async route(c, body, format, k) {
      try {
        const got = router.routeSliced(c as typeof cfg, body, format, k as never, '/v1/chat/completions', 'id');
        const r = got instanceof Promise ? await got : got;
        const entry = r.targets[0]!.entry;
        router.completed(`id${n++}`, r, { status: 200, served: entry, attempts: [], usage: null, finishReason: 'stop', ttftMs: 1, adjustments: [] } as never, '0.0001');
        return shown({ headers: r.headers, targets: r.targets.map((t) => [t.entry.id, t.maxOutputTokens]), decision: r.decision, recorded: recordedDecision(r.decision, []), all: recordedDecision(r.decision, [], Number.POSITIVE_INFINITY), defaults: r.defaultsApplied, features: r.view.features });
      } catch (e) {
        const g = e as { message?: string; headers?: unknown; param?: unknown };
        return shown({ error: g.message, param: g.param, headers: g.headers });
      }
    },
    async rank(c, body, format, k) {
      try { return shown(await router.rank(c as typeof cfg, body, format, k as never, '/v1/router/rank', 'id')); } catch (e) { return shown({ error: (e as Error).message }); }
    },
  };
}

/** A seeded Math.random, reset before each side's call so both draw the same numbers. */
function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; return s / 2 ** 32; };
}

const dir = mkdtempSync(path.join(tmpdir(), 'router-same-'));
const sides = [await sideOf(benchPath('..'), dir), await sideOf(path.resolve(f.baseline), dir)];
const random = Math.random;
let compared = 0, differ = 0, seed = 1;
try {
  for (let r = 0; r < Number(f.rounds); r++) {
    for (const k of keys) {
      for (const [format, body] of bodies(r)) {
        for (const what of ['route', 'rank'] as const) {
          const out: string[] = [];
          for (const s of sides) {
            Math.random = seeded(seed);
            out.push(await s[what](s.cfg, structuredClone(body), format, k));
          }
          seed++;
          compared++;
          if (process.env.SAME_DUMP) console.log(what, k?.name ?? null, out[0]!.slice(0, 300));
          if (out[0] !== out[1]) {
            differ++;
            if (differ <= 5) {
              let at = 0;
              while (out[0]![at] === out[1]![at]) at++;
              console.log(`DIFFERENT ${what} key=${k?.name ?? null} ${format} ${JSON.stringify(body).slice(0, 100)}\n  this:     ...${out[0]!.slice(Math.max(0, at - 150), at + 150)}\n  baseline: ...${out[1]!.slice(Math.max(0, at - 150), at + 150)}`);
            }
          }
        }
      }
    }
  }
} finally {
  Math.random = random;
  rmSync(dir, { recursive: true, force: true });
}
console.log(`${compared} decisions compared, ${differ} different`);
process.exit(differ > 0 ? 1 : 0);
