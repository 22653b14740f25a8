// What makes a dashboard page load fast after the first: the HTML preloads every module under one
// versioned path cached for a year (a stale version is revalidated instead), the catalog answers 304 to
// a browser that has it, and everything still carries the strict CSP.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';

const ADMIN_KEY = 'admin-key-for-the-static-test-0123456789abcd';
let oa: MockUpstream; let gw: TestGateway;
before(async () => {
  oa = await startMockOpenAI();
  gw = await startTestGateway({ providers: [{ id: 'mockai', format: 'openai-chat', base_url: oa.url }], gateway: { auth: { enabled: true, admin_key: ADMIN_KEY } } });
});
after(async () => { await gw.stop(); await oa.close(); });

test('the HTML loads every module from one versioned path, cached immutably; other versions revalidate', async () => {
  const res = await fetch(`${gw.url}/dashboard/usage`);
  assert.equal(res.headers.get('cache-control'), 'no-store');
  assert.match(res.headers.get('content-security-policy')!, /script-src 'self'/);
  const html = await res.text();
  const main = /<script type="module" src="(\/dashboard\/assets\/v\/[A-Za-z0-9_-]+)\/main\.ts"><\/script>/.exec(html);
  assert.ok(main, 'the entry module is versioned');
  const base = main[1]!;
  const preloads = [...html.matchAll(/<link rel="modulepreload" href="([^"]+)">/g)].map((m) => m[1]!);
  for (const m of ['api.ts', 'dom.ts', 'pages/usage.ts', 'pages/requests.ts', 'pages/router-decision.ts']) assert.ok(preloads.includes(`${base}/${m}`), m);
  assert.ok(!/<script>/.test(html), 'no inline script');
  const asset = await fetch(`${gw.url}${base}/pages/usage.ts`);
  assert.equal(asset.status, 200);
  assert.equal(asset.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  assert.match(asset.headers.get('content-type')!, /javascript/);
  const body = await asset.text();
  assert.ok(!/:\s*UsageMetrics\b/.test(body), 'types are stripped');
  const stale = await fetch(`${gw.url}/dashboard/assets/v/notthisone/pages/usage.ts`);
  assert.equal(stale.status, 200);
  assert.equal(stale.headers.get('cache-control'), 'no-cache');
  assert.equal((await fetch(`${gw.url}${base}/../../../../package.json`)).status, 404);
  assert.equal((await fetch(`${gw.url}${base}/nope.ts`)).status, 404);
});

test('the catalog carries an ETag and answers 304 to a browser that has it, only when signed in', async () => {
  const auth = { authorization: `Bearer ${ADMIN_KEY}` };
  const first = await fetch(`${gw.url}/admin/api/v1/models`, { headers: auth });
  assert.equal(first.status, 200);
  const etag = first.headers.get('etag')!;
  assert.match(etag, /^"[A-Za-z0-9_-]+"$/);
  assert.equal(first.headers.get('cache-control'), 'private, no-cache');
  assert.ok(((await first.json()) as { data: Array<{ id: string }> }).data.some((m) => m.id === 'mockai/test-model'));
  const again = await fetch(`${gw.url}/admin/api/v1/models`, { headers: { ...auth, 'if-none-match': etag } });
  assert.equal(again.status, 304);
  assert.equal((await fetch(`${gw.url}/admin/api/v1/models`, { headers: { 'if-none-match': etag } })).status, 401);
});
