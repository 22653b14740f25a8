// Set-up calls the admin API tests share: a dashboard user's session cookie, an API key created
// through POST /admin/api/v1/keys, and any call made with the admin key.
import assert from 'node:assert/strict';

/** Signs `email` in (POST /session) and returns the headers that carry its session; throws on anything but 200. */
export async function sessionHeaders(url: string, email: string, password: string): Promise<Record<string, string>> {
  const res = await fetch(`${url}/admin/api/v1/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) });
  if (res.status !== 200) throw new Error(`sign-in of ${email}: ${res.status} ${await res.text()}`);
  return { cookie: res.headers.get('set-cookie')!.split(';')[0]! };
}

/** Creates an API key as `caller` (admin headers) with `body` (name, owner_id, ...); returns the secret and its record. */
export async function createApiKey(url: string, caller: Record<string, string>, body: Record<string, unknown>): Promise<{ key: string; record: { id: string } }> {
  const res = await fetch(`${url}/admin/api/v1/keys`, { method: 'POST', headers: { ...caller, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (res.status !== 201) throw new Error(`key creation: ${res.status} ${await res.text()}`);
  return (await res.json()) as { key: string; record: { id: string } };
}

/** `method path` on the admin API of the gateway at `url` with the admin key; asserts a 2xx and returns its JSON. */
export async function adminKeyCall(url: string, adminKey: string, method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${url}/admin/api/v1${path}`, {
    method, headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' }, body: body === undefined ? null : JSON.stringify(body),
  });
  const data = await res.json() as Record<string, unknown>;
  assert.ok(res.ok, `${method} ${path}: ${res.status} ${JSON.stringify(data)}`);
  return data;
}
