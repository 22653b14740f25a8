// API key format, hashing, model globs and the KeyRing: every rejection is a 401/403 GatewayError that
// never echoes the key, and last-used times reach the store in batches.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { KeyAdmin } from '../src/auth/admin.ts';
import { KeyRing } from '../src/auth/keyring.ts';
import { compileModelPatterns, constantTimeEqual, generateKey, hashKey, keyMatchesHash, parsePresentedKey, presentedKeyFromHeaders } from '../src/auth/keys.ts';
import { GatewayError } from '../src/gateway-error.ts';
import { SqliteStore } from '../src/store/sqlite.ts';

test('generateKey: format, randomness and a SHA-256 hash of the whole key', () => {
  const a = generateKey();
  const b = generateKey();
  assert.match(a.key, /^sk-gw-[0-9A-Za-z]{12}-[0-9A-Za-z]{43}$/);
  assert.equal(a.key.slice(6, 18), a.id);
  assert.equal(a.hash, createHash('sha256').update(a.key).digest('hex'));
  assert.equal(hashKey(a.key), a.hash);
  assert.notEqual(a.id, b.id);
  assert.notEqual(a.key, b.key);
  assert.deepEqual(parsePresentedKey(` ${a.key} `), { id: a.id, key: a.key });
  for (const bad of ['', 'sk-gw-', 'sk-gw-abc-def', `${a.key}!`, a.key.replace('sk-gw-', 'sk-xx-'), `sk-gw-${a.id}-short`]) {
    assert.equal(parsePresentedKey(bad), null, bad);
  }
  assert.equal(keyMatchesHash(a.key, a.hash), true);
  assert.equal(keyMatchesHash(b.key, a.hash), false);
  assert.equal(keyMatchesHash(a.key, 'not-hex'), false);
  assert.equal(keyMatchesHash(a.key, a.hash.slice(0, 63)), false);
});

test('constantTimeEqual: equal only for the same characters and length', () => {
  assert.equal(constantTimeEqual('', ''), true);
  assert.equal(constantTimeEqual('abc', 'abc'), true);
  assert.equal(constantTimeEqual('abc', 'abd'), false);
  assert.equal(constantTimeEqual('abc', 'Abc'), false);
  assert.equal(constantTimeEqual('abc', 'abcd'), false);
  assert.equal(constantTimeEqual('é', 'e'), false);
});

test('presentedKeyFromHeaders reads Bearer and x-api-key', () => {
  assert.equal(presentedKeyFromHeaders({ authorization: 'Bearer sk-gw-x' }), 'sk-gw-x');
  assert.equal(presentedKeyFromHeaders({ authorization: 'bearer   sk-gw-y  ' }), 'sk-gw-y');
  assert.equal(presentedKeyFromHeaders({ 'x-api-key': 'sk-gw-z' }), 'sk-gw-z');
  assert.equal(presentedKeyFromHeaders({ authorization: 'Basic abc' }), undefined);
  assert.equal(presentedKeyFromHeaders({ authorization: 'Bearer a b' }), undefined, 'two words are not a key');
  assert.equal(presentedKeyFromHeaders({ authorization: 'Bearer ', 'x-api-key': 'sk-gw-z' }), 'sk-gw-z', 'an empty Bearer falls back to x-api-key');
  assert.equal(presentedKeyFromHeaders({ authorization: 'Bearer\tsk-gw-t' }), 'sk-gw-t');
  assert.equal(presentedKeyFromHeaders({}), undefined);
});

test('model globs: * spans any characters, empty list allows all', () => {
  const allow = compileModelPatterns(['openai/*', 'anthropic/claude-*-haiku', 'mistral/exact.model']);
  assert.equal(allow('openai/gpt-4o'), true);
  assert.equal(allow('anthropic/claude-3-5-haiku'), true);
  assert.equal(allow('anthropic/claude-3-5-sonnet'), false);
  assert.equal(allow('mistral/exact.model'), true);
  assert.equal(allow('mistral/exactXmodel'), false);
  assert.equal(allow('xopenai/gpt'), false);
  assert.equal(compileModelPatterns([])('any/model'), true);
});

function expectCode(fn: () => unknown, code: string, status: number, secret?: string): GatewayError {
  try { fn(); } catch (err) {
    assert.ok(err instanceof GatewayError);
    assert.equal(err.code, code);
    assert.equal(err.status, status);
    if (secret) assert.ok(!err.message.includes(secret), 'message must not echo the key');
    return err;
  }
  assert.fail(`expected ${code}`);
}

test('KeyRing authenticates from memory and rejects missing, malformed, unknown, revoked and expired keys', async (t) => {
  const store = new SqliteStore({ path: ':memory:' });
  await store.migrate();
  let now = Date.parse('2030-01-01T00:00:00Z');
  const ring = new KeyRing(store, { now: () => now });
  t.after(() => ring.close().then(() => store.close()));
  const admin = new KeyAdmin(store, () => ring.refresh());
  await ring.start();

  const { key, record } = await admin.createKey({ name: 'ci', allowed_models: ['openai/*'] });
  const { key: short } = await admin.createKey({ name: 'short', expires_at: '2030-06-01T00:00:00Z' });
  assert.equal(ring.size, 2);
  const k = ring.authenticate(key);
  assert.equal(k.id, record.id);
  assert.equal(k.name, 'ci');

  expectCode(() => ring.authenticate(undefined), 'missing_api_key', 401);
  expectCode(() => ring.authenticate('  '), 'missing_api_key', 401);
  expectCode(() => ring.authenticate('sk-not-a-key'), 'invalid_api_key', 401, 'sk-not-a-key');
  const forged = `${key.slice(0, -3)}abc`;
  expectCode(() => ring.authenticate(forged), 'invalid_api_key', 401, forged);
  // A key that verified once is compared with the remembered key, before and after a reload; another
  // secret under the same public id still fails, and the right key still passes after it.
  assert.equal(ring.authenticate(key).id, record.id);
  await ring.refresh();
  expectCode(() => ring.authenticate(forged), 'invalid_api_key', 401, forged);
  expectCode(() => ring.authenticate(`${key}0`), 'invalid_api_key', 401);
  assert.equal(ring.authenticate(` ${key} `).id, record.id);
  const unknown = generateKey().key;
  expectCode(() => ring.authenticate(unknown), 'invalid_api_key', 401, unknown);

  ring.checkModel(k, 'openai/gpt-4o');
  const denied = expectCode(() => ring.checkModel(k, 'anthropic/claude'), 'model_not_allowed', 403);
  assert.match(denied.message, /anthropic\/claude/);

  now = Date.parse('2030-07-01T00:00:00Z');
  assert.match(expectCode(() => ring.authenticate(short), 'invalid_api_key', 401, short).message, /expired/);
  assert.equal(await admin.revokeKey(record.id), true);
  assert.match(expectCode(() => ring.authenticate(key), 'invalid_api_key', 401, key).message, /revoked/);
});

test('KeyRing batches last-used times and keeps them when the store write fails', async (t) => {
  const store = new SqliteStore({ path: ':memory:' });
  await store.migrate();
  t.after(() => store.close());
  let now = Date.parse('2030-01-01T00:00:00Z');
  const ring = new KeyRing(store, { now: () => now });
  const admin = new KeyAdmin(store, () => ring.refresh());
  await ring.refresh();
  const { key, record } = await admin.createKey({ name: 'a' });
  ring.authenticate(key);
  now += 1000;
  ring.authenticate(key);

  const real = store.touchKeys.bind(store);
  let calls = 0;
  store.touchKeys = async () => { calls++; throw new Error('db down'); };
  await assert.rejects(ring.flushTouches(), /db down/);
  assert.equal(calls, 1);
  assert.equal((await store.getKey(record.id))?.lastUsedAt, null);
  store.touchKeys = real;
  await ring.close();
  assert.equal((await store.getKey(record.id))?.lastUsedAt, '2030-01-01T00:00:01.000Z');
});
