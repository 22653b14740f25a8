// Keys written to the store by another process (the CLI's `keys create`, another replica) after this
// gateway started: the admin API names them at their first appearance. Usage by key labelled them by
// their ids ("key05") and the request history had no key name, until a call more than 10 s later.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { adminKeyCall } from './helpers/admin-api.ts';
import { KEYS, seedOperatorData } from './helpers/operator-data.ts';

const ADMIN_KEY = 'admin-key-for-the-key-names-test-0123456789';
let gw: TestGateway;
const names = new Map(KEYS.map((k) => [k.id, k.name]));

before(async () => {
  gw = await startTestGateway({ providers: [], gateway: { auth: { enabled: true, admin_key: ADMIN_KEY } } });
  // Straight into the store, as a `keys create` in another process writes them: this gateway is not told.
  await seedOperatorData(gw.services.store!, { count: 300 });
});
after(() => gw.stop());

test('usage by key and the request history name keys made by another process since the gateway started', async () => {
  const from = new Date(Date.now() - 31 * 86_400_000).toISOString();
  const usage = await adminKeyCall(gw.url, ADMIN_KEY, 'GET', `/usage?group=key&top=50&from=${from}`) as { groups: Array<{ group: string; label: string }> };
  assert.ok(usage.groups.length >= 10);
  assert.deepEqual(usage.groups.map((g) => g.label), usage.groups.map((g) => names.get(g.group)), 'each key by its name');
  const page = await adminKeyCall(gw.url, ADMIN_KEY, 'GET', `/requests?from=${from}&limit=50`) as { data: Array<{ id: string; key_id: string; key_name: string | null }> };
  assert.ok(page.data.length > 0);
  assert.deepEqual(page.data.map((r) => r.key_name), page.data.map((r) => names.get(r.key_id)));
  const detail = await adminKeyCall(gw.url, ADMIN_KEY, 'GET', `/requests/${page.data[0]!.id}`) as { key_name: string };
  assert.equal(detail.key_name, names.get(page.data[0]!.key_id));
});
