// Admin writes (create, edit, rotate, revoke a key; sign in) while another process holds the SQLite
// file's write lock: every in-flight request keeps being served (the event loop never waits on the lock;
// before, each write slept in SQLite's busy handler on the event loop for as long as the lock was held,
// up to 5 s), the writes land once the lock is released, and a lock held past 5 s is a 503 in the admin
// API's error shape with Retry-After that changed nothing.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { startTestGateway } from './helpers/gateway.ts';
import { holdSqliteLock, longestLoopGap } from './helpers/sqlite-lock.ts';

const ADMIN = 'admin-key-for-admin-writes-on-a-locked-file';
const PW = 'a long enough password';
/** Well under the time the lock is held (3 s or more), well over what a loaded machine's loop pauses by itself. */
const MAX_GAP_MS = 1000;

test('admin writes on a locked SQLite file keep the event loop turning: they land after the lock, or answer 503 with Retry-After past 5 s', async (t) => {
  const gw = await startTestGateway({ providers: [], gateway: { auth: { enabled: true, admin_key: ADMIN } } });
  t.after(() => gw.stop());
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = { authorization: `Bearer ${ADMIN}` }) => {
    const res = await fetch(`${gw.url}/admin/api/v1${path}`, { method, headers: { ...headers, 'content-type': 'application/json' }, body: body === undefined ? null : JSON.stringify(body) });
    return { status: res.status, headers: res.headers, body: (await res.json()) as any };
  };
  await gw.services.dashboard!.users.create({ email: 'root@example.com', role: 'admin', password: PW });
  const a = await call('POST', '/keys', { name: 'a' });
  const b = await call('POST', '/keys', { name: 'b' });
  assert.equal(b.status, 201);
  const file = join(gw.dir, 'gateway.db');

  const lock = await holdSqliteLock(file, 3000);
  const { value: answers, gapMs } = await longestLoopGap(() => Promise.all([
    call('POST', '/keys', { name: 'created while locked' }),
    call('PATCH', `/keys/${a.body.record.id}`, { name: 'a renamed' }),
    call('POST', `/keys/${a.body.record.id}/rotate`, { grace_hours: 1 }),
    call('DELETE', `/keys/${b.body.record.id}`),
    call('POST', '/session', { email: 'root@example.com', password: PW }, {}),
  ]));
  await lock.released;
  t.diagnostic(`lock held 3 s: longest event-loop gap ${gapMs.toFixed(0)} ms`);
  assert.ok(gapMs < MAX_GAP_MS, `the event loop stalled for ${gapMs.toFixed(0)} ms`);
  assert.deepEqual(answers.map((x) => x.status), [201, 200, 200, 200, 200], JSON.stringify(answers.map((x) => x.body)));
  const listed = (await call('GET', '/keys')).body.data as Array<{ id: string; name: string; revoked_at: string | null; previous_secret_valid_until: string | null }>;
  assert.deepEqual(listed.map((k) => k.name).sort(), ['a renamed', 'b', 'created while locked']);
  assert.ok(listed.find((k) => k.id === b.body.record.id)!.revoked_at !== null);
  assert.ok(listed.find((k) => k.id === a.body.record.id)!.previous_secret_valid_until !== null);

  const long = await holdSqliteLock(file, 6500);
  const { value: refused, gapMs: longGap } = await longestLoopGap(() => call('POST', '/keys', { name: 'refused' }));
  t.diagnostic(`lock held 6.5 s: answered ${refused.status}; longest event-loop gap ${longGap.toFixed(0)} ms`);
  assert.ok(longGap < MAX_GAP_MS, `the event loop stalled for ${longGap.toFixed(0)} ms`);
  assert.equal(refused.status, 503);
  assert.equal(refused.headers.get('retry-after'), '1');
  assert.equal(refused.body.error.code, 'storage_unavailable');
  assert.match(refused.body.error.message, /database is unavailable \(the database stayed locked by another connection for 5 s\); retry later/);
  await long.released;
  assert.equal(((await call('GET', '/keys')).body.data as unknown[]).length, 3, 'the refused create changed nothing');
  assert.equal((await call('POST', '/keys', { name: 'retried' })).status, 201);
});

test('a signed-in dashboard read while another process holds the lock answers at once: the session\'s last-seen time is written after, not waited for', async (t) => {
  const gw = await startTestGateway({ providers: [], gateway: { auth: { enabled: true, admin_key: ADMIN }, dashboard: { enabled: true } } });
  t.after(() => gw.stop());
  await gw.services.dashboard!.users.create({ email: 'reader@example.com', role: 'admin', password: PW });
  const signIn = await fetch(`${gw.url}/admin/api/v1/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'reader@example.com', password: PW }) });
  assert.equal(signIn.status, 200);
  const cookie = signIn.headers.get('set-cookie')!.split(';')[0]!;
  // Last seen two minutes ago: the next request writes the time again (at most once a minute).
  await gw.services.store!.sql.run('UPDATE dashboard_sessions SET last_seen_at = ?', [new Date(Date.now() - 120_000).toISOString()]);
  const lock = await holdSqliteLock(join(gw.dir, 'gateway.db'), 3000);
  const t0 = performance.now();
  const read = await fetch(`${gw.url}/admin/api/v1/session`, { headers: { cookie } });
  const ms = performance.now() - t0;
  assert.equal(read.status, 200);
  t.diagnostic(`answered in ${ms.toFixed(0)} ms with the lock held 3 s`);
  assert.ok(ms < 1500, `the read waited ${ms.toFixed(0)} ms on the lock`);
  await lock.released;
  // The time lands once the lock is gone.
  for (let i = 0; i < 100; i++) {
    const r = await gw.services.store!.sql.all('SELECT last_seen_at FROM dashboard_sessions');
    if (Date.now() - Date.parse(String(r[0]!.last_seen_at)) < 60_000) return;
    await new Promise((res) => setTimeout(res, 50));
  }
  assert.fail('the last-seen time was not written after the lock');
});
