// Key administration and the `keys` command: validation errors are invalid_parameter with the field
// named, the public view never carries the hash, and the CLI's output and exit codes are stable.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KeyAdmin, validateCreateKey, type CreateKeyInput } from '../src/auth/admin.ts';
import { runKeysCommand } from '../src/auth/cli.ts';
import { hashKey } from '../src/auth/keys.ts';
import { GatewayError } from '../src/gateway-error.ts';
import { SqliteStore } from '../src/store/sqlite.ts';

async function memStore(): Promise<SqliteStore> {
  const s = new SqliteStore({ path: ':memory:' });
  await s.migrate();
  return s;
}

test('validateCreateKey rejects bad input naming the parameter', () => {
  const now = Date.parse('2030-01-01T00:00:00Z');
  const bad: Array<[CreateKeyInput, string]> = [
    [{ name: '  ' }, 'name'],
    [{ name: 'a', expires_at: 'tomorrow' }, 'expires_at'],
    [{ name: 'a', expires_at: '2020-01-01T00:00:00Z' }, 'expires_at'],
    [{ name: 'a', allowed_models: ['ok/*', 'bad model'] }, 'allowed_models'],
    [{ name: 'a', budget_usd: '-1' }, 'budget_usd'],
    [{ name: 'a', budget_usd: '0' }, 'budget_usd'],
    [{ name: 'a', budget_usd: '1e3' }, 'budget_usd'],
    [{ name: 'a', budget_period: 'month' }, 'budget_period'],
    [{ name: 'a', budget_usd: 5, budget_period: 'year' as 'month' }, 'budget_period'],
    [{ name: 'a', rpm_limit: 0 }, 'rpm_limit'],
    [{ name: 'a', tpm_limit: 1.5 }, 'tpm_limit'],
  ];
  for (const [input, param] of bad) {
    assert.throws(() => validateCreateKey(input, now), (e: unknown) => e instanceof GatewayError && e.code === 'invalid_parameter' && e.param === param, param);
  }
  const ok = validateCreateKey({ name: ' team ', budget_usd: 2.5, rpm_limit: 10, allowed_models: ['a/*', 'a/*'] }, now);
  assert.deepEqual(ok, {
    name: 'team', createdAt: '2030-01-01T00:00:00.000Z', lastUsedAt: null, expiresAt: null, revokedAt: null,
    allowedModels: ['a/*'], budgetUsd: '2.5', budgetPeriod: 'month', rpmLimit: 10, tpmLimit: null,
  });
});

test('KeyAdmin stores only the hash and lists public views', async (t) => {
  const store = await memStore();
  t.after(() => store.close());
  let changes = 0;
  const admin = new KeyAdmin(store, async () => { changes++; });
  const { key, record } = await admin.createKey({ name: 'svc', budget_usd: '10.00', budget_period: 'week', tpm_limit: 5000 });
  assert.equal(changes, 1);
  assert.equal((await store.getKey(record.id))?.hash, hashKey(key));
  assert.equal('hash' in record, false);
  assert.equal(record.status, 'active');
  assert.equal(record.prefix, `sk-gw-${record.id}-`);
  assert.equal(record.budget_usd, '10');
  const list = await admin.listKeys();
  assert.equal(list.length, 1);
  assert.ok(!JSON.stringify(list).includes(hashKey(key)));
  assert.ok(!JSON.stringify(list).includes(key));
  assert.equal(await admin.revokeKey(record.id), true);
  assert.equal(await admin.revokeKey(record.id), false);
  assert.equal(changes, 2);
  assert.equal((await admin.listKeys())[0]?.status, 'revoked');
});

/** The exit code, what went to stdout (`text`) and what to stderr (`err`). */
async function run(store: SqliteStore, ...argv: string[]): Promise<{ code: number; text: string; err: string }> {
  const lines: string[] = [];
  const errs: string[] = [];
  const code = await runKeysCommand(argv, store, { out: (s) => lines.push(s), err: (s) => errs.push(s) });
  return { code, text: lines.join('\n'), err: errs.join('\n') };
}

test('keys command: create, list, revoke, with exit codes', async (t) => {
  const store = await memStore();
  t.after(() => store.close());
  const created = await run(store, 'keys', 'create', '--name', 'cli key', '--models', 'openai/*,anthropic/*', '--budget', '25', '--period=day', '--rpm', '60');
  assert.equal(created.code, 0, created.text);
  const key = /key: (sk-gw-\S+)/.exec(created.text)?.[1];
  assert.ok(key);
  assert.match(created.text, /shown only once/);
  assert.match(created.text, /budget: \$25 per day/);
  const id = key.slice(6, 18);
  const rec = await store.getKey(id);
  assert.deepEqual([rec?.name, rec?.allowedModels, rec?.budgetUsd, rec?.budgetPeriod, rec?.rpmLimit], ['cli key', ['openai/*', 'anthropic/*'], '25', 'day', 60]);

  const json = await run(store, 'create', '--name', 'j', '--json');
  assert.equal(json.code, 0);
  assert.match(JSON.parse(json.text).key, /^sk-gw-/);

  const list = await run(store, 'list');
  assert.equal(list.code, 0);
  assert.equal(list.text.split('\n').length, 2);
  assert.ok(list.text.includes(id) && !list.text.includes(key));
  const listJson = await run(store, 'list', '--json');
  // Listed by creation time, then id: two keys made in the same millisecond may come in either order.
  assert.deepEqual(listJson.text.split('\n').map((l) => JSON.parse(l).name).sort(), ['cli key', 'j']);

  assert.deepEqual(await run(store, 'revoke', id), { code: 0, text: `revoked key ${id}`, err: '' });
  assert.equal((await run(store, 'revoke', id)).code, 1);
  assert.deepEqual(await run(store, 'revoke', 'nope'), { code: 1, text: '', err: 'error: no key with id nope' });

  for (const argv of [[], ['frob'], ['create'], ['create', '--name'], ['create', '--name', 'x', '--bogus', '1'], ['create', '--name', 'x', '--rpm', 'ten'], ['revoke']]) {
    const r = await run(store, ...argv);
    assert.equal(r.code, 2, `${argv.join(' ')}: ${r.err}`);
    assert.match(r.err, /^error: .*\nusage:/);
    assert.equal(r.text, '', 'errors go to stderr');
  }
  const invalid = await run(store, 'create', '--name', 'x', '--expires', 'soon');
  assert.equal(invalid.code, 1);
  assert.match(invalid.err, /expires_at must be an ISO 8601 time/);
  assert.equal((await store.listKeys()).length, 2);
});
