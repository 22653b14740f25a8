// The admin key: a compare whose time does not depend on the length of the key or of a guess, a minimum
// length refused at config load (start, reload, `check`), and failed attempts limited per client address
// with a 429 (a blocked address is refused even with the right key; other addresses are not affected).
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { test } from 'node:test';
import { ADMIN_KEY_MIN_LENGTH, AdminAttempts, adminKeyMatches } from '../src/auth/admin-key.ts';
import { constantTimeEqual } from '../src/auth/keys.ts';
import { startTestGateway } from './helpers/gateway.ts';
import { runCli, writeGatewayConfig } from './helpers/process.ts';

const KEY = 'k'.repeat(64);

test('adminKeyMatches: only the exact key; absent, empty, shorter, longer and near keys fail', () => {
  assert.equal(adminKeyMatches(KEY, KEY), true);
  for (const guess of [undefined, '', 'k', KEY.slice(1), `${KEY}k`, `${KEY.slice(0, -1)}j`]) assert.equal(adminKeyMatches(guess, KEY), false, String(guess));
  assert.equal(adminKeyMatches('', ''), false, 'an empty configured key never matches');
});

/**
 * Median over `rounds` of the time ratio a/b, each round timing `n` calls of a then of b right after it
 * (after a warm-up of both): on a shared machine a slow phase then hits both sides of one ratio instead
 * of only the side measured while it lasted.
 */
function medianRatio(a: () => unknown, b: () => unknown, n = 2000, rounds = 15): number {
  const time = (fn: () => unknown): number => { const t0 = process.hrtime.bigint(); for (let i = 0; i < n; i++) fn(); return Number(process.hrtime.bigint() - t0); };
  time(a); time(b);
  const out: number[] = [];
  for (let r = 0; r < rounds; r++) out.push(r % 2 === 0 ? time(a) / time(b) : 1 / (time(b) / time(a)));
  return out.sort((x, y) => x - y)[rounds >> 1]!;
}

test('the compare takes as long for a guess of the wrong length as for one of the right length (the old one returned early)', () => {
  const sameLength = `${KEY.slice(0, -1)}j`;
  const short = 'kkkk';
  const ratio = (f: (a: string, b: string) => boolean): number => medianRatio(() => f(sameLength, KEY), () => f(short, KEY));
  const now = ratio(adminKeyMatches);
  const before = ratio(constantTimeEqual);
  console.log(`same-length / wrong-length time: admin compare ${now.toFixed(2)}, early-return compare ${before.toFixed(2)}`);
  // Generous bounds for a shared, noisy machine: equal within 2x now; the early return is many times apart.
  assert.ok(now > 0.5 && now < 2, `admin compare ratio ${now}`);
  assert.ok(before > 3, `the early-return compare leaks the length (ratio ${before})`);
});

test('AdminAttempts: blocked after maxFailures in the window, free again after it; memory bounded', () => {
  let now = 1_000_000;
  const a = new AdminAttempts({ maxFailures: 3, windowMs: 60_000, maxAddresses: 2, now: () => now });
  for (let i = 0; i < 3; i++) { assert.equal(a.blockedFor('1.1.1.1'), 0); a.failed('1.1.1.1'); }
  assert.equal(a.blockedFor('1.1.1.1'), 60);
  now += 30_500;
  assert.equal(a.blockedFor('1.1.1.1'), 30);
  assert.equal(a.blockedFor('2.2.2.2'), 0);
  now += 30_000;
  assert.equal(a.blockedFor('1.1.1.1'), 0);
  a.failed('a'); a.failed('b'); a.failed('c');
  assert.ok(a.tracked <= 2);
});

function adminGet(url: string, key: string, localAddress = '127.0.0.1', path = '/admin/keys'): Promise<{ status: number; retryAfter: string | undefined; body: string }> {
  return new Promise((ok, fail) => {
    const req = request(`${url}${path}`, { headers: { authorization: `Bearer ${key}` }, localAddress, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => { body += c; }).on('end', () => ok({ status: res.statusCode!, retryAfter: res.headers['retry-after'] as string | undefined, body }));
    });
    req.on('error', fail);
    req.end();
  });
}

test('failed admin attempts: the 11th from one address within a minute is a 429 with retry-after, right key or not; another address is unaffected', async (t) => {
  const gw = await startTestGateway({ providers: [], gateway: { auth: { enabled: true, admin_key: KEY } } });
  t.after(() => gw.stop());
  assert.equal((await adminGet(gw.url, KEY)).status, 200);
  for (let i = 0; i < 10; i++) assert.equal((await adminGet(gw.url, `wrong-${i}`)).status, 401);
  const blocked = await adminGet(gw.url, KEY);
  assert.equal(blocked.status, 429, blocked.body);
  assert.ok(Number(blocked.retryAfter) >= 1 && Number(blocked.retryAfter) <= 60);
  assert.match(blocked.body, /too many failed admin key attempts/);
  assert.doesNotMatch(blocked.body, new RegExp(KEY));
  assert.equal((await adminGet(gw.url, KEY, '127.0.0.2')).status, 200, 'another address');
});

test('the dashboard admin API shares the check: the same constant-time compare and the same attempt counter', async (t) => {
  const gw = await startTestGateway({ providers: [], gateway: { auth: { enabled: true, admin_key: KEY }, dashboard: { enabled: true } } });
  t.after(() => gw.stop());
  assert.equal((await adminGet(gw.url, KEY, '127.0.0.1', '/admin/api/v1/keys')).status, 200);
  for (let i = 0; i < 5; i++) assert.equal((await adminGet(gw.url, `wrong-${i}`, '127.0.0.1', '/admin/api/v1/keys')).status, 401);
  for (let i = 0; i < 5; i++) assert.equal((await adminGet(gw.url, `wrong-${i}`)).status, 401);
  assert.equal((await adminGet(gw.url, KEY, '127.0.0.1', '/admin/api/v1/keys')).status, 429, 'ten failures across both surfaces');
  assert.equal((await adminGet(gw.url, KEY)).status, 429);
});

test(`an admin key shorter than ${ADMIN_KEY_MIN_LENGTH} characters is a config error naming where it came from`, async () => {
  const { configFile } = writeGatewayConfig([], { auth: { enabled: true, admin_key: 'short-key' } });
  const r = await runCli(['check', '--config', configFile]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /gateway\.yaml at \/auth\/admin_key: the admin key is 9 characters; it must be at least 24/);
  const viaEnv = writeGatewayConfig([], { auth: { enabled: true } });
  const r2 = await runCli(['check', '--config', viaEnv.configFile], { GATEWAY_ADMIN_KEY: 'tiny' });
  assert.equal(r2.code, 1);
  assert.match(r2.stderr, /environment at GATEWAY_ADMIN_KEY: the admin key is 4 characters/);
  const ok = await runCli(['check', '--config', viaEnv.configFile], { GATEWAY_ADMIN_KEY: KEY });
  assert.equal(ok.code, 0, ok.stderr);
});
