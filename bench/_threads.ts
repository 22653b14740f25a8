import { readFileSync, readdirSync } from 'node:fs';
import { startGateway } from './lib/gateway.ts';
import { forkServer, benchPath, stopChild } from './lib/child.ts';
import { everyProviderKey } from './lib/repo-config.ts';
import { LoadProcess } from './lib/load.ts';
const upstream = await forkServer(benchPath('lib/upstream.ts'));
const origin = `http://127.0.0.1:${upstream.port}`;
const load = new LoadProcess();
const threads = (pid: number): Map<string, number> => {
  const m = new Map<string, number>();
  for (const t of readdirSync(`/proc/${pid}/task`)) {
    const s = readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8');
    const name = s.slice(s.indexOf('(') + 1, s.lastIndexOf(')'));
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    m.set(`${t}:${name}`, (Number(f[11]) + Number(f[12])) * 10);
  }
  return m;
};
const msg = [{ role: 'user', content: 'Hello, how are you today?' }];
for (const [name, body] of Object.entries({ plain: { model: 'openai/gpt-4o-mini', messages: msg }, router: { model: 'router', messages: msg } })) {
  const gw = await startGateway({ config: process.argv[2] ?? 'gateway.router.yaml', upstream: origin, withKey: false, env: everyProviderKey() });
  const t = { origin: gw.origin, path: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
  await load.closed({ ...t, connections: 16, durationMs: 2000 });
  const a = threads(gw.child.pid!);
  const res = await load.closed({ ...t, connections: 16, durationMs: 8000 });
  const b = threads(gw.child.pid!);
  const rows = [...b].map(([k, v]) => [k, ((v - (a.get(k) ?? 0)) * 1000) / res.ok] as const).filter(([, v]) => v > 0.5).sort((x, y) => y[1] - x[1]);
  console.log(`${name}: ${(res.ok / 8).toFixed(0)} rps; us per request by thread:`, rows.map(([k, v]) => `${k}=${v.toFixed(1)}`).join(' '), ' total', rows.reduce((s, [, v]) => s + v, 0).toFixed(1));
  await stopChild(gw.child);
}
load.close(); await stopChild(upstream.child);
