// Profiles the gateway under one kind of traffic at a time (pass-through, router over the catalog,
// router over three named models), one gateway process per kind, so each CPU profile holds that
// traffic only; prints requests served and the profile directory for bench/profile-top.ts.
// Run: npx node bench/router-profile.ts [--seconds S] [--warmup S] [--connections C] [--out DIR]
import path from 'node:path';
import { benchArgs } from './lib/args.ts';
import { benchPath, forkServer, stopChild } from './lib/child.ts';
import { startGateway } from './lib/gateway.ts';
import { LoadProcess } from './lib/load.ts';
import { everyProviderKey } from './lib/repo-config.ts';

const { values: f } = benchArgs({ options: {
  seconds: { type: 'string', default: '10' }, warmup: { type: 'string', default: '2' }, connections: { type: 'string', default: '16' }, out: { type: 'string', default: '/tmp/router-profile' },
} });
const upstream = await forkServer(benchPath('lib/upstream.ts'));
const origin = `http://127.0.0.1:${upstream.port}`;
const headers = { 'content-type': 'application/json', authorization: 'Bearer sk-bench' };
const msg = [{ role: 'user', content: 'Hello, how are you today?' }];
const kinds = {
  plain: { model: 'openai/gpt-4o-mini', messages: msg },
  router: { model: 'router', messages: msg },
  named: { model: 'router', models: ['gpt-4o-mini', 'gpt-4.1-mini', 'gpt-4o'], messages: msg },
};
const load = new LoadProcess();
try {
  for (const [name, body] of Object.entries(kinds)) {
    const dir = path.join(f.out, name);
    const gw = await startGateway({ config: 'gateway.router.yaml', upstream: origin, withKey: false, profileDir: dir, env: everyProviderKey() });
    const t = { origin: gw.origin, path: '/v1/chat/completions', headers, body: JSON.stringify(body) };
    await load.closed({ ...t, connections: Number(f.connections), durationMs: Number(f.warmup) * 1000 });
    const res = await load.closed({ ...t, connections: Number(f.connections), durationMs: Number(f.seconds) * 1000 });
    await stopChild(gw.child);
    console.log(`${name}: ${res.ok} requests (${res.errors} errors) in ${f.seconds} s; profile in ${dir}`);
  }
} finally {
  load.close();
  await stopChild(upstream.child);
}
