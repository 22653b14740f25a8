// Ejection sharing (src/router/health-share.ts) against the real Redis: an ejection stored while a
// replica's subscription was away is read back when it returns, for the providers of the config in
// force then (one a reload added after start included), not only those known at start.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { UpstreamHealth } from '../src/engine/health.ts';
import { HealthShare } from '../src/router/health-share.ts';

const URL = 'redis://127.0.0.1:6379';

async function until(what: string, ok: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

test('stored ejections are re-read for the providers configured now, after the subscription comes back', async () => {
  const prefix = `gw-test-hs-${process.pid}-${Date.now()}:`;
  const admin = new Redis(URL, { lazyConnect: false });
  const health = new UpstreamHealth();
  const errors: unknown[] = [];
  const share = new HealthShare(URL, health, { prefix, onError: (e) => errors.push(e) });
  let providers = ['one'];
  try {
    const later = Date.now() + 60_000;
    await admin.set(`${prefix}eject:one`, String(later), 'PX', 60_000);
    await share.start(() => providers);
    assert.equal(health.isEjected('one'), true, 'a stored ejection in force is applied at start');

    // A reload adds provider "two"; another replica ejects it while this one's subscription is gone,
    // so the message is missed and only the stored key tells.
    providers = ['one', 'two'];
    const killed = await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub') as number;
    assert.ok(killed >= 1, 'the subscriber connection was killed');
    await admin.set(`${prefix}eject:two`, String(later), 'PX', 60_000);
    assert.equal(health.isEjected('two'), false);
    await until('the ejection of the provider added after start to be read back', () => health.isEjected('two'));

    // Live messages still arrive after the resubscription.
    await admin.publish(`${prefix}eject`, JSON.stringify({ provider: 'three', until: later }));
    await until('a published ejection', () => health.isEjected('three'));
    assert.deepEqual(errors, []);
  } finally {
    await share.close();
    await admin.del(`${prefix}eject:one`, `${prefix}eject:two`);
    admin.disconnect();
  }
});
