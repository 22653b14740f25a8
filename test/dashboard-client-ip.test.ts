// The client address the dashboard's sign-in limits count per: behind `dashboard.trust_proxy` proxies
// it is read from the right of X-Forwarded-For (each proxy appends what it saw), never from the left,
// which the client writes itself: with the leftmost entry a guesser sent a new address with every
// attempt and the per-address limit never held.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IncomingMessage } from 'node:http';
import { stringify } from 'yaml';
import { clientIp } from '../src/http/admin-api/context.ts';
import { loadConfig } from '../src/config/load.ts';
import { compileConfig } from '../src/config/compile.ts';
import type { Services } from '../src/http/services.ts';

const svc = (hops: number) => ({ holder: { current: { dashboard: { trustProxy: hops } } } }) as unknown as Services;
const req = (xff?: string) => ({ headers: xff === undefined ? {} : { 'x-forwarded-for': xff }, socket: { remoteAddress: '10.0.0.9' } }) as unknown as IncomingMessage;

test('the address is the entry the trusted proxies appended, not one the client wrote', () => {
  // The client wrote 1.2.3.4; the one proxy in front appended what it saw, 203.0.113.7.
  assert.equal(clientIp(svc(1), req('1.2.3.4, 203.0.113.7')), '203.0.113.7');
  assert.equal(clientIp(svc(1), req('203.0.113.7')), '203.0.113.7');
  // Two proxies: the outer one appended the client's address, the inner one the outer proxy's.
  assert.equal(clientIp(svc(2), req('1.2.3.4, 203.0.113.7, 10.1.1.1')), '203.0.113.7');
  assert.equal(clientIp(svc(2), req('203.0.113.7')), '203.0.113.7', 'fewer entries than proxies: the first');
  assert.equal(clientIp(svc(1), req(' , ')), '10.0.0.9', 'nothing usable: the socket');
  assert.equal(clientIp(svc(0), req('1.2.3.4, 203.0.113.7')), '10.0.0.9', 'no proxy trusted: the header is ignored');
});

test('dashboard.trust_proxy takes true (one proxy), a number of proxies, or false; other values fail the config', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-trust-proxy-'));
  try {
    mkdirSync(join(dir, 'providers'));
    const load = (v: unknown) => {
      writeFileSync(join(dir, 'gateway.yaml'), stringify({ version: 1, providers_dir: './providers', dashboard: { trust_proxy: v } }));
      return compileConfig(loadConfig(join(dir, 'gateway.yaml'), {}), {}).dashboard.trustProxy;
    };
    assert.equal(load(true), 1);
    assert.equal(load(false), 0);
    assert.equal(load(3), 3);
    assert.throws(() => load(-1), /trust_proxy/);
    assert.throws(() => load('yes'), /trust_proxy/);
  } finally { rmSync(dir, { recursive: true, force: true }); }
});
