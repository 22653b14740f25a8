// Hot reload of an invalid router config while routed traffic flows: a policy with an unknown
// json-logic operation or variable, router.priors_file pointed at a missing file or at a malformed
// one. Each edit arrives through the file watcher (as an operator's save does); the reload is refused
// with a log line naming the file and the path, the previous config keeps serving routed requests
// unchanged (streamed and not), no request fails, and a later valid edit is picked up, including
// the one that creates the missing priors file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, constants, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import dc from 'node:diagnostics_channel';
import type { Worker } from 'node:worker_threads';
import { parse, stringify } from 'yaml';
import { startMockOpenAI } from './mocks/index.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';

type Rec = Record<string, any>;
const caps = { tools: false, vision: false, reasoning: false, structured_output: false, prompt_caching: false };
const pricing = (p: string, c: string) => ({ prompt: p, completion: c });

const priors = (q: Record<string, number>) => JSON.stringify({
  schema: 1, updated: '2026-11-28', sources: { ours: { source: 'our own evaluation, 2026-11', date: '2026-11' } },
  models: Object.fromEntries(Object.entries(q).map(([m, v]) => [m, { figures: { general: { q: v, benchmark: 'MMLU', source: 'ours', date: '2026-11' } } }])),
});

function edit(gw: TestGateway, change: (doc: Rec) => void): void {
  const doc = parse(readFileSync(gw.configFile, 'utf8')) as Rec;
  change(doc);
  writeFileSync(gw.configFile, stringify(doc));
}

const reloads = (gw: TestGateway): Record<string, number> => {
  const out: Record<string, number> = { ok: 0, unchanged: 0, invalid: 0 };
  for (const m of gw.services.metrics.registry.render().matchAll(/gateway_config_reloads_total\{result="(\w+)"\} (\d+)/g)) out[m[1]!] = Number(m[2]);
  return out;
};

async function until(what: string, cond: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('invalid router edits through the watcher: refused with file and path logged, routed traffic unchanged, later valid edits picked up', async (t) => {
  const oa = await startMockOpenAI({ chunkDelayMs: 5 });
  const gw = await startTestGateway({
    providers: [{ id: 'p', format: 'openai-chat', base_url: oa.url, models: [
      { name: 'house-a', pricing: pricing('0.000001', '0.000002'), capabilities: caps, context_window: 16000, max_completion_tokens: 4000 },
      { name: 'house-b', pricing: pricing('0.000001', '0.000002'), capabilities: caps, context_window: 16000, max_completion_tokens: 4000 },
    ] }],
    gateway: {
      reload: { watch: true, debounce_ms: 30 },
      router: {
        exploration: { share: 0 }, learning: { train_interval_ms: 3_600_000, state_poll_ms: 3_600_000 },
        policies: { only_b: [{ require: { '==': [{ var: 'candidate.model' }, 'house-b'] } }] },
      },
    },
  });
  const priorsPath = join(gw.dir, 'priors.json');
  writeFileSync(priorsPath, priors({ 'house-a': 0.95, 'house-b': 0.6 }));
  const errors: string[] = [];
  const origError = console.error;
  console.error = (...a: unknown[]) => { errors.push(a.map(String).join(' ')); };
  let flowing = true;
  let traffic: Promise<void> = Promise.resolve();
  t.after(async () => { flowing = false; await traffic.catch(() => {}); console.error = origError; await gw.stop(); await oa.close(); });

  // Starting point: the priors file makes house-a the router's choice.
  edit(gw, (d) => { d.router.priors_file = './priors.json'; });
  await until('the priors file to load', () => gw.services.holder.current.router.priors !== undefined && reloads(gw).ok >= 1);
  const good = gw.services.holder.current.version;

  // Routed traffic flows through every edit below: each answer must be 200, complete, and served by `expect`.
  let expect = 'p/house-a';
  const seen: Array<{ status: number; model: string; done: boolean; stream: boolean; expected: string }> = [];
  const one = async (stream: boolean): Promise<void> => {
    const expected = expect;
    const r = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'router', stream, messages: [{ role: 'user', content: 'tell me a few words about reloading config files' }] }),
    });
    const text = await r.text();
    const model = r.headers.get('x-router-model') ?? '';
    seen.push({ status: r.status, model, stream, expected, done: stream ? text.includes('data: [DONE]') : (JSON.parse(text) as Rec).choices?.[0]?.finish_reason === 'stop' });
  };
  traffic = (async () => { for (let i = 0; flowing; i++) await Promise.all([one(false), one(true)]); })();
  const settle = async (): Promise<number> => { const n = seen.length; await until('routed traffic after the edit', () => seen.length >= n + 6); return seen.length; };
  await settle();

  const refused = async (label: string, change: (d: Rec) => void, file: RegExp, path: RegExp): Promise<void> => {
    const before = reloads(gw).invalid;
    const errFrom = errors.length;
    change(gw as unknown as Rec);
    await until(`${label}: the reload to be refused`, () => reloads(gw).invalid > before);
    const logged = errors.slice(errFrom).join('\n');
    assert.match(logged, /config reload rejected, still serving version/, `${label}: logged`);
    assert.match(logged, file, `${label}: the log names the file`);
    assert.match(logged, path, `${label}: the log names the path`);
    assert.equal(gw.services.holder.current.version, good, `${label}: the previous config keeps serving`);
    assert.match(String(gw.services.holder.lastError?.message), path);
    const health = await (await fetch(`${gw.url}/health`)).json() as Rec;
    assert.match(String(health.last_reload_error?.message), path, `${label}: /health shows the refused reload`);
    await settle();
  };

  await refused('unknown operation', () => edit(gw, (d) => { d.router.policies.bad = [{ prefer: { frobnicate: [1] } }]; }),
    /gateway\.yaml/, /\/router\/policies\/bad\/0\/prefer: .*unknown json-logic operation "frobnicate"/);
  await refused('unknown variable', () => edit(gw, (d) => { d.router.policies.bad = [{ exclude: { '==': [{ var: 'candidate.pricee' }, 1] } }]; }),
    /gateway\.yaml/, /\/router\/policies\/bad\/0\/exclude: .*unknown variable "candidate\.pricee"/);
  await refused('default policy naming a missing one', () => edit(gw, (d) => { delete d.router.policies.bad; d.router.default_policy = 'nope'; }),
    /gateway\.yaml/, /\/router\/default_policy/);
  // gateway.yaml put back as it was: the same version, the reload answers "unchanged".
  let unchanged = reloads(gw).unchanged;
  edit(gw, (d) => { delete d.router.default_policy; });
  await until('gateway.yaml put back', () => reloads(gw).unchanged > unchanged);
  assert.equal(gw.services.holder.current.version, good);
  await refused('malformed priors file', () => writeFileSync(priorsPath, '{ "schema": 1, "models": { "house-a": '),
    /priors\.json/, /priors\.json at line \d+/);
  // A priors file whose aliases expand too far ("billion laughs"): refused naming the file, as any other problem.
  const bomb = 'a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\n';
  await refused('priors file with an alias bomb', () => writeFileSync(priorsPath, bomb), /priors\.json/, /priors\.json: Excessive alias count/);
  // The broken file fixed again: the same version again.
  unchanged = reloads(gw).unchanged;
  writeFileSync(priorsPath, priors({ 'house-a': 0.95, 'house-b': 0.6 }));
  await until('the fixed priors file', () => reloads(gw).unchanged > unchanged);
  assert.equal(gw.services.holder.current.version, good);
  await refused('priors_file pointed at a missing file', () => edit(gw, (d) => { d.router.priors_file = './priors-new.json'; }),
    /priors-new\.json/, /priors-new\.json: cannot read/);
  assert.equal(gw.services.holder.current.version, good);

  // The missing file created: that edit is picked up (the watcher follows a file the refused config named).
  expect = 'p/house-b';
  const okBefore = reloads(gw).ok;
  writeFileSync(join(gw.dir, 'priors-new.json'), priors({ 'house-a': 0.5, 'house-b': 0.97 }));
  await until('the created priors file to be picked up', () => reloads(gw).ok > okBefore, 3000).catch((e: Error) => {
    throw new Error(`${e.message}; watched: ${[...gw.services.holder.watchedFiles].join(', ')}`);
  });
  assert.notEqual(gw.services.holder.current.version, good);
  assert.equal((await (await fetch(`${gw.url}/health`)).json() as Rec).last_reload_error, null, 'cleared by the good reload');
  await settle();
  await settle();

  flowing = false;
  await traffic;
  assert.ok(seen.length >= 40, `${seen.length} routed requests`);
  const bad = seen.filter((s) => s.status !== 200 || !s.done);
  assert.deepEqual(bad, [], 'every routed request answered in full');
  // Until the valid edit each answer came from the previous config's choice; a request that was racing the switch may have either.
  const wrong = seen.filter((s) => s.model !== s.expected && !(s.expected === 'p/house-b' && s.model === 'p/house-a'));
  assert.deepEqual(wrong, []);
  assert.ok(seen.slice(-4).every((s) => s.model === 'p/house-b'), 'the valid edit is serving');
  rmSync(priorsPath, { force: true });
});

test('the config loader thread dying (out of memory, say) does not stop later reloads: the next one starts a new thread', async (t) => {
  const oa = await startMockOpenAI();
  const gw = await startTestGateway({
    providers: [{ id: 'p', format: 'openai-chat', base_url: oa.url, models: [{ name: 'house-a', pricing: pricing('0.000001', '0.000002'), capabilities: caps }] }],
    gateway: { reload: { watch: false }, router: { exploration: { share: 0 } } },
  });
  t.after(async () => { await gw.stop(); await oa.close(); });
  // The loader thread is started by the first reload; the worker_threads channel hands it to the test.
  const workers: Worker[] = [];
  const onWorker = (m: unknown): void => { workers.push((m as { worker: Worker }).worker); };
  dc.subscribe('worker_threads', onWorker);
  t.after(() => { dc.unsubscribe('worker_threads', onWorker); });
  edit(gw, (d) => { d.router.exploration.share = 0.01; });
  assert.ok((await gw.services.holder.reload()).ok);
  assert.equal(workers.length, 1, 'the loader thread');
  await workers[0]!.terminate();
  // A reload after its death answers (before: it waited on the dead thread forever, and every later one behind it).
  edit(gw, (d) => { d.router.exploration.share = 0.02; });
  const within = <T>(p: Promise<T>): Promise<T> => Promise.race([p, new Promise<T>((_, fail) => setTimeout(() => fail(new Error('reload hung')), 3000).unref())]);
  const r = await within(gw.services.holder.reload());
  assert.ok(r.ok && r.changed, JSON.stringify(r));
  assert.equal(gw.services.holder.current.router.explorationShare, 0.02);
  const routed = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'router', messages: [{ role: 'user', content: 'hi' }] }) });
  assert.equal(routed.status, 200);
  await routed.text();
});

test('router.priors_file pointed at a file that blocks on read (a FIFO): the reload times out and is refused; the next valid edit reloads', async (t) => {
  const oa = await startMockOpenAI();
  const gw = await startTestGateway({
    providers: [{ id: 'p', format: 'openai-chat', base_url: oa.url, models: [{ name: 'house-a', pricing: pricing('0.000001', '0.000002'), capabilities: caps }] }],
    gateway: { reload: { watch: false }, router: { exploration: { share: 0 } } },
  });
  const fifo = join(gw.dir, 'priors-fifo.json');
  execFileSync('mkfifo', [fifo]);
  // Whatever happens, the thread stuck on the FIFO gets its end of file (a writer that opens and closes it).
  const unblock = (): void => { try { closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK)); } catch { /* no reader left */ } };
  t.after(async () => { unblock(); await gw.stop(); await oa.close(); });
  gw.services.holder.loadTimeoutMs = 500;
  const before = gw.services.holder.current.version;
  edit(gw, (d) => { d.router.priors_file = './priors-fifo.json'; });
  const started = Date.now();
  const r = await gw.services.holder.reload();
  assert.equal(r.ok, false);
  assert.match((r as { error: string }).error, /gateway\.yaml and the files it names did not finish within 500 ms/);
  assert.ok(Date.now() - started < 3000, 'refused at the timeout');
  assert.equal(gw.services.holder.current.version, before, 'the previous config keeps serving');
  const routed = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'router', messages: [{ role: 'user', content: 'hi' }] }) });
  assert.equal(routed.status, 200);
  await routed.text();
  unblock();
  // The next valid edit reloads (a new loader thread; before, every later reload waited behind the stuck one).
  // A new thread loads its modules and compiles the schemas first: more than 500 ms on a busy machine.
  gw.services.holder.loadTimeoutMs = 30_000;
  writeFileSync(join(gw.dir, 'priors.json'), priors({ 'house-a': 0.9 }));
  edit(gw, (d) => { d.router.priors_file = './priors.json'; });
  const ok = await gw.services.holder.reload();
  assert.ok(ok.ok && ok.changed, JSON.stringify(ok));
});
