// Names people read in listings (key names, user names and emails, provider ids and names, model and
// policy names) holding a text-direction override, a zero-width or other invisible character, or a C1
// control: a key named "\u202Etset-dorp" was listed as "prod-test". One validator (src/util/visible-name.ts)
// refuses them: the admin APIs with a 400 invalid_parameter in their envelope, the command line with
// exit 2 before anything is stored, the config loader naming file and path. Right-to-left letters and
// emoji stay welcome.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { runKeysCommand } from '../src/auth/cli.ts';
import { ConfigError, loadConfig } from '../src/config/load.ts';
import { runUsersCommand } from '../src/dashboard/users-cli.ts';
import { SqliteStore } from '../src/store/sqlite.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { startMockOpenAI, type MockUpstream } from './mocks/index.ts';

const ADMIN_KEY = 'admin-key-for-the-names-test-0123456789abcdef';
const ADMIN = { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' };
const RTL_NAME = 'مفتاح الإنتاج הפקה 🚀';

let oa: MockUpstream; let gw: TestGateway; let userId = ''; let keyId = '';
before(async () => {
  oa = await startMockOpenAI();
  gw = await startTestGateway({ providers: [{ id: 'mockai', format: 'openai-chat', base_url: oa.url }], gateway: { auth: { enabled: true, admin_key: ADMIN_KEY } } });
  userId = (await gw.services.dashboard!.users.create({ email: 'root@example.com', role: 'admin', password: 'a long enough password' })).id;
  keyId = (await gw.services.admin!.createKey({ name: 'plain' })).record.id;
});
after(async () => { await gw.stop(); await oa.close(); });

async function call(method: string, path: string, body: unknown): Promise<{ status: number; error: { code?: string; param?: string | null; message?: string } | undefined; body: Record<string, unknown> }> {
  const r = await fetch(`${gw.url}${path}`, { method, headers: ADMIN, body: JSON.stringify(body), signal: AbortSignal.timeout(10_000) });
  const b = (await r.json()) as Record<string, unknown>;
  return { status: r.status, error: b.error as { code?: string; param?: string | null; message?: string } | undefined, body: b };
}

test('admin APIs: a name or email with an override, zero-width, isolate or C1 character is a 400 naming the field', async () => {
  const cases: Array<[string, string, unknown, string, string]> = [
    ['POST', '/admin/keys', { name: '\u202Etset-dorp' }, 'name', 'U+202E'],
    ['POST', '/admin/api/v1/keys', { name: 'prod\u200Bkey' }, 'name', 'U+200B'],
    ['PATCH', `/admin/api/v1/keys/${keyId}`, { name: '\u2066team\u2069' }, 'name', 'U+2066'],
    ['POST', '/admin/api/v1/users', { email: 'ops\u202D@example.com' }, 'email', 'U+202D'],
    ['POST', '/admin/api/v1/users', { email: 'ops@example.com', name: 'Ops\u0085Team' }, 'name', 'U+0085'],
    ['PATCH', `/admin/api/v1/users/${userId}`, { name: 'Root\u200F' }, 'name', 'U+200F'],
  ];
  for (const [method, path, body, param, char] of cases) {
    const r = await call(method, path, body);
    const what = `${method} ${path} ${JSON.stringify(body)}`;
    assert.deepEqual([r.status, r.error?.code, r.error?.param], [400, 'invalid_parameter', param], `${what}: ${JSON.stringify(r.body)}`);
    assert.equal(r.error!.message, `${param} must not contain control, invisible or text-direction characters (found ${char})`, what);
  }
  const keys = (await gw.services.store!.listKeys()).map((k) => k.name);
  assert.deepEqual(keys, ['plain'], 'no key was created or renamed');
  assert.deepEqual((await gw.services.dashboard!.users.list()).map((u) => [u.email, u.name]), [['root@example.com', 'root']]);
  // Right-to-left letters and emoji are names like any other.
  const ok = await call('POST', '/admin/api/v1/keys', { name: RTL_NAME });
  assert.equal(ok.status, 201, JSON.stringify(ok.body));
});

async function memStore(t: { after(fn: () => unknown): void }): Promise<SqliteStore> {
  const s = new SqliteStore({ path: ':memory:' });
  await s.migrate();
  t.after(() => s.close());
  return s;
}

test('keys and users commands: such a name or email is a usage error (exit 2) on stderr, and nothing is stored', async (t) => {
  const store = await memStore(t);
  const out: string[] = []; const err: string[] = [];
  const io = { out: (s: string) => out.push(s), err: (s: string) => err.push(s) };
  assert.equal(await runKeysCommand(['create', '--name', 'ci', '--json'], store, io), 0);
  const id = (JSON.parse(out.pop()!) as { id: string }).id;
  for (const [argv, message] of [
    [['keys', 'create', '--name', '\u202Etset-dorp'], '--name must not contain control, invisible or text-direction characters (found U+202E)'],
    [['keys', 'edit', id, '--name', 'ci\u2067'], '--name must not contain control, invisible or text-direction characters (found U+2067)'],
    [['users', 'create', '--email', 'ops\u200D@example.com'], '--email must not contain control, invisible or text-direction characters (found U+200D)'],
    [['users', 'create', '--email', 'ops@example.com', '--name', 'Ops\u0007'], '--name must not contain control, invisible or text-direction characters (found U+0007)'],
  ] as Array<[string[], string]>) {
    const code = argv[0] === 'keys' ? await runKeysCommand(argv, store, io) : await runUsersCommand(argv, store, io);
    assert.equal(code, 2, argv.join(' '));
    assert.ok(err.pop()!.startsWith(`error: ${message}\nusage:`), argv.join(' '));
  }
  assert.deepEqual(out, []);
  assert.deepEqual((await store.listKeys()).map((k) => k.name), ['ci']);
  assert.equal((await store.sql.all('SELECT COUNT(*) AS n FROM dashboard_users'))[0]?.n, 0);
});

test('config: provider and model names, policy and rule names with such characters are refused with file and path', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cfg-names-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'providers'));
  writeFileSync(join(dir, 'providers', 'acme.yaml'), 'id: acme\nname: "Acme\\u202E"\nformat: openai-chat\nbase_url: http://127.0.0.1:9/v1\nauth: { type: bearer }\nmodels:\n  - { name: "m\\u200B1" }\n  - { name: "ok-model" }\n');
  writeFileSync(join(dir, 'gateway.yaml'), [
    'version: 1', 'providers_dir: ./providers', 'router:', '  policies:',
    '    "cheap\\u2068":', '      - { exclude: true }', '    fine:', '      - { name: "rule\\u0080", exclude: true }', '',
  ].join('\n'));
  let e: unknown;
  try { loadConfig(join(dir, 'gateway.yaml'), {}); } catch (x) { e = x; }
  assert.ok(e instanceof ConfigError, String(e));
  const shown = e.problems.map((p) => `${p.file.replace(/^.*?(gateway\.yaml|providers\/acme\.yaml)$/, '$1')} at ${p.path}: ${p.message}`);
  for (const line of [
    'providers/acme.yaml at /name: a provider name must not contain control, invisible or text-direction characters (found U+202E)',
    'providers/acme.yaml at /models/0/name: a model name must not contain control, invisible or text-direction characters (found U+200B)',
    'gateway.yaml at /router/policies/cheap\u2068: a policy name must not contain control, invisible or text-direction characters (found U+2068)',
    'gateway.yaml at /router/policies/fine/0/name: a rule name must not contain control, invisible or text-direction characters (found U+0080)',
  ]) assert.ok(shown.includes(line), `missing: ${line}\n${shown.join('\n')}`);
  assert.equal(shown.length, 4, shown.join('\n'));
});
