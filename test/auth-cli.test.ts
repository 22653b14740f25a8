// `keys edit`, `keys rotate` and the spend shown by `keys list`: the command goes through the same
// KeysData as the admin API, so validation, rotation grace and revocation behave the same; exit codes
// 0 done, 1 refused (bad value, unknown or revoked key), 2 usage error.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runKeysCommand, type KeysCommandOptions } from '../src/auth/cli.ts';
import { KeyRing } from '../src/auth/keyring.ts';
import { loadGraceHashes } from '../src/dashboard/keys-data.ts';
import { SqliteStore } from '../src/store/sqlite.ts';
import type { InferenceRecord } from '../src/store/types.ts';
import { uuidv7 } from '../src/util/uuid.ts';

async function memStore(t: { after(fn: () => unknown): void }): Promise<SqliteStore> {
  const s = new SqliteStore({ path: ':memory:' });
  await s.migrate();
  t.after(() => s.close());
  return s;
}

/** The exit code, what went to stdout (`text`) and what to stderr (`err`). */
async function run(store: SqliteStore, argv: string[], opts?: KeysCommandOptions): Promise<{ code: number; text: string; err: string }> {
  const lines: string[] = [];
  const errs: string[] = [];
  const code = await runKeysCommand(argv, store, { out: (s) => lines.push(s), err: (s) => errs.push(s) }, opts);
  return { code, text: lines.join('\n'), err: errs.join('\n') };
}

async function create(store: SqliteStore, ...extra: string[]): Promise<{ id: string; key: string }> {
  const r = await run(store, ['create', '--name', 'k', '--json', ...extra]);
  assert.equal(r.code, 0, r.text);
  const j = JSON.parse(r.text) as { id: string; key: string };
  return { id: j.id, key: j.key };
}

/** Authenticates `key` against the store as the gateway does (key ring with the grace hashes). */
async function accepts(store: SqliteStore, key: string, now = Date.now()): Promise<boolean> {
  const ring = new KeyRing(store, { graceHashes: () => loadGraceHashes(store.sql, now), now: () => now });
  await ring.refresh();
  try { ring.authenticate(key); return true; } catch { return false; }
}

test('keys edit changes every field, clears limits with none/never/all, and keeps what is not named', async (t) => {
  const store = await memStore(t);
  const { id } = await create(store, '--models', 'openai/*', '--budget', '10', '--period', 'week', '--rpm', '5', '--tpm', '100');
  const expires = new Date(Date.now() + 7 * 86_400_000).toISOString();
  const r = await run(store, ['keys', 'edit', id, '--name', 'renamed', '--models', 'anthropic/*,openai/gpt-5', '--budget', '2.50', '--period=day', '--rpm', '60', '--expires', expires]);
  assert.equal(r.code, 0, r.text);
  assert.match(r.text, new RegExp(`^updated key ${id} "renamed" \\(expires ${expires}\\)\n  budget: \\$2\\.5 per day  rpm: 60  tpm: 100  models: anthropic/\\*,openai/gpt-5$`));
  let k = await store.getKey(id);
  assert.deepEqual([k?.name, k?.allowedModels, k?.budgetUsd, k?.budgetPeriod, k?.rpmLimit, k?.tpmLimit, k?.expiresAt],
    ['renamed', ['anthropic/*', 'openai/gpt-5'], '2.5', 'day', 60, 100, expires]);

  const cleared = await run(store, ['edit', id, '--budget', 'none', '--rpm', 'none', '--tpm', 'NONE', '--models', 'all', '--expires', 'never', '--json']);
  assert.equal(cleared.code, 0, cleared.text);
  const j = JSON.parse(cleared.text) as Record<string, unknown>;
  assert.deepEqual([j.name, j.budget_usd, j.budget_period, j.rpm_limit, j.tpm_limit, j.allowed_models, j.expires_at], ['renamed', null, null, null, null, [], null]);
  assert.equal('hash' in j, false);
  k = await store.getKey(id);
  assert.deepEqual([k?.budgetUsd, k?.rpmLimit, k?.tpmLimit, k?.allowedModels, k?.expiresAt], [null, null, null, [], null]);
});

test('keys edit refuses bad values (exit 1, store unchanged), unknown and revoked keys, and bad usage (exit 2)', async (t) => {
  const store = await memStore(t);
  const { id } = await create(store, '--budget', '10');
  const before = await store.getKey(id);
  for (const [args, message] of [
    [['--budget', '-3'], /budget_usd must be a positive decimal/],
    [['--expires', '2001-01-01T00:00:00Z'], /expires_at must be in the future/],
    [['--models', 'bad model'], /allowed_models must be a list/],
    [['--name', ' '], /name is required/],
  ] as Array<[string[], RegExp]>) {
    const r = await run(store, ['edit', id, ...args]);
    assert.equal(r.code, 1, `${args.join(' ')}: ${r.err}`);
    assert.match(r.err, message);
  }
  assert.deepEqual(await store.getKey(id), before);
  assert.deepEqual(await run(store, ['edit', 'nokey', '--name', 'x']), { code: 1, text: '', err: 'error: no key with id nokey' });
  for (const argv of [['edit', id], ['edit', '--name', 'x'], ['edit', id, id, '--name', 'x'], ['edit', id, '--rpm', 'ten'], ['edit', id, '--period', 'year'], ['edit', id, '--colour', 'red']]) {
    const r = await run(store, argv);
    assert.equal(r.code, 2, `${argv.join(' ')}: ${r.err}`);
    assert.match(r.err, /^error: .*\nusage:/);
  }
  assert.equal((await run(store, ['revoke', id])).code, 0);
  const revoked = await run(store, ['edit', id, '--name', 'x']);
  assert.deepEqual(revoked, { code: 1, text: '', err: 'error: a revoked key cannot be edited' });
});

test('keys rotate: a new secret shown once, the old one valid for the grace period; revoke ends the grace', async (t) => {
  const store = await memStore(t);
  const { id, key: old } = await create(store);
  const r = await run(store, ['rotate', id, '--grace-hours', '2']);
  assert.equal(r.code, 0, r.text);
  const fresh = /key: (sk-gw-\S+)/.exec(r.text)?.[1];
  assert.ok(fresh && fresh !== old && fresh.startsWith(`sk-gw-${id}-`));
  assert.match(r.text, /previous secret works until (\S+)/);
  assert.match(r.text, /shown only once/);
  const until = Date.parse(/works until (\S+)/.exec(r.text)![1]!);
  assert.ok(Math.abs(until - (Date.now() + 2 * 3_600_000)) < 60_000);
  assert.equal(await accepts(store, fresh), true);
  assert.equal(await accepts(store, old), true);
  assert.equal(await accepts(store, old, until + 1000), false);
  // The key's id (and so its usage, budget and owner) carries on; the listing shows no secret.
  const list = await run(store, ['list']);
  assert.ok(list.text.includes(id) && !list.text.includes(fresh) && !list.text.includes(old));

  // The configured default grace (dashboard.rotation_grace_hours) applies without --grace-hours; 0 ends the old secret at once.
  const second = await run(store, ['rotate', id, '--json'], { rotationGraceMs: 5 * 3_600_000 });
  const j = JSON.parse(second.text) as { key: string; previous_secret_valid_until: string };
  assert.ok(Math.abs(Date.parse(j.previous_secret_valid_until) - (Date.now() + 5 * 3_600_000)) < 60_000);
  const third = await run(store, ['rotate', id, '--grace-hours=0', '--json']);
  const k3 = JSON.parse(third.text) as { key: string; previous_secret_valid_until: string | null };
  assert.equal(k3.previous_secret_valid_until, null);
  assert.equal(await accepts(store, j.key), false);
  assert.equal(await accepts(store, k3.key), true);
  assert.equal(await accepts(store, fresh), true, 'the first rotation’s grace still runs');

  for (const bad of ['-1', '721', 'soon', '']) {
    const x = await run(store, ['rotate', id, `--grace-hours=${bad}`]);
    assert.deepEqual(x, { code: 1, text: '', err: 'error: grace_hours must be a number from 0 to 720' }, bad);
  }
  assert.equal((await run(store, ['rotate'])).code, 2);
  assert.deepEqual(await run(store, ['rotate', 'nokey']), { code: 1, text: '', err: 'error: no key with id nokey' });

  assert.deepEqual(await run(store, ['revoke', id]), { code: 0, text: `revoked key ${id}`, err: '' });
  assert.equal(await accepts(store, fresh), false, 'revocation ends the grace period too');
  assert.deepEqual(await loadGraceHashes(store.sql), []);
  assert.deepEqual(await run(store, ['rotate', id]), { code: 1, text: '', err: 'error: a revoked key cannot be rotated' });
  assert.match((await run(store, ['revoke', id])).err, new RegExp(`^error: key ${id} was already revoked at \\d{4}-`));
});

const spent = (keyId: string, cost: string, at: number): InferenceRecord => ({
  id: uuidv7(at), createdAt: new Date(at).toISOString(), keyId, route: '/v1/chat/completions', clientFormat: 'openai-chat',
  requestedModel: 'p/m', servedModel: 'p/m', provider: 'p', attempts: [], status: 200, errorCode: null, latencyMs: 10, ttftMs: null,
  stream: false, inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, costUsd: cost,
  finishReason: 'stop', metadata: null, extra: null, clientIp: null, requestBody: null, responseBody: null,
});

test('keys list shows spend in the budget period against the budget, exactly', async (t) => {
  const store = await memStore(t);
  const a = await create(store, '--budget', '4', '--period', 'total');
  const b = await create(store);
  const now = Date.now();
  await store.insertInferences([
    spent(a.id, '0.25', now - 60_000), spent(a.id, '0.000000000000000001', now - 120_000), spent(a.id, '0.75', now - 400 * 86_400_000),
    { ...spent(b.id, '0.1', now - 30_000), status: 500 },
  ]);
  const r = await run(store, ['list']);
  assert.equal(r.code, 0, r.text);
  const block = (id: string): string => r.text.split('\n').find((l) => l.startsWith(id)) ?? '';
  assert.match(block(a.id), /spent: \$1\.000000000000000001 of \$4 in total \(25\.0%\), runs out \S+  requests 24h: 2 \(0 errors\)/);
  assert.match(block(b.id), /spent: \$0\.1 this month  requests 24h: 1 \(1 errors\)/);
  const json = (await run(store, ['list', '--json'])).text.split('\n').map((l) => JSON.parse(l) as { id: string; stats: { period_spend_usd: string; budget_used_ratio: number | null } });
  const ja = json.find((k) => k.id === a.id)!;
  assert.equal(ja.stats.period_spend_usd, '1.000000000000000001');
  assert.equal(ja.stats.budget_used_ratio, 0.25);
  assert.equal(json.find((k) => k.id === b.id)!.stats.budget_used_ratio, null);
});

test('keys list: a month budget the last 7 days\' rate would not spend before the month ends lasts the month', async (t) => {
  // It said "runs out <a date years away>", as if the budget never started again (the Keys page's fix, helper 4).
  const store = await memStore(t);
  const m = await create(store, '--budget', '500', '--period', 'month');
  await store.insertInferences([spent(m.id, '0.01', Date.now() - 60_000)]);
  const r = await run(store, ['list']);
  const line = r.text.split('\n').find((l) => l.startsWith(m.id)) ?? '';
  assert.match(line, /spent: \$0\.01 of \$500 this month \(0\.0%\), lasts this month at the last 7 days' rate/);
});
