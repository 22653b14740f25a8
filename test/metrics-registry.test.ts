// Prometheus text rendering: HELP/TYPE lines, label escaping, cumulative histogram buckets, exact
// decimal counters, the series cap, and the gateway's metric set with writer gauges read at render time.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createGatewayMetrics } from '../src/metrics/gateway.ts';
import { Registry } from '../src/metrics/registry.ts';

test('counters and gauges render HELP, TYPE and escaped labels', () => {
  const r = new Registry();
  const c = r.counter('demo_total', 'A demo\ncounter with \\ backslash', ['route', 'model']);
  c.inc({ route: '/v1/chat', model: 'say "hi"\\\nnow' });
  c.inc({ route: '/v1/chat', model: 'say "hi"\\\nnow' }, 2);
  c.inc({ route: '/v1/messages', model: 'a/b' });
  const g = r.gauge('demo_gauge', 'A gauge');
  g.set(undefined, 2.5);
  g.dec(undefined, 1);
  assert.equal(r.render(), [
    '# HELP demo_total A demo\\ncounter with \\\\ backslash',
    '# TYPE demo_total counter',
    'demo_total{route="/v1/chat",model="say \\"hi\\"\\\\\\nnow"} 3',
    'demo_total{route="/v1/messages",model="a/b"} 1',
    '# HELP demo_gauge A gauge',
    '# TYPE demo_gauge gauge',
    'demo_gauge 1.5',
    '',
  ].join('\n'));
  assert.throws(() => c.inc({ route: 'x', model: 'y' }, -1), /only increase/);
  assert.throws(() => r.counter('demo_total', 'again'), /registered twice/);
  assert.throws(() => r.counter('bad-name', 'x'), /invalid metric name/);
  assert.throws(() => r.counter('ok_name', 'x', ['le']), /invalid label name/);
});

test('histograms render cumulative buckets, +Inf, sum and count', () => {
  const r = new Registry();
  const h = r.histogram('lat_seconds', 'Latency', ['route'], [1, 0.1, 0.5]);
  for (const v of [0.05, 0.1, 0.3, 2]) h.observe({ route: 'r' }, v);
  assert.equal(r.render(), [
    '# HELP lat_seconds Latency',
    '# TYPE lat_seconds histogram',
    'lat_seconds_bucket{route="r",le="0.1"} 2',
    'lat_seconds_bucket{route="r",le="0.5"} 3',
    'lat_seconds_bucket{route="r",le="1"} 3',
    'lat_seconds_bucket{route="r",le="+Inf"} 4',
    'lat_seconds_sum{route="r"} 2.45',
    'lat_seconds_count{route="r"} 4',
    '',
  ].join('\n'));
});

test('decimal counters sum money exactly where floats would drift', () => {
  const r = new Registry();
  const cost = r.decimalCounter('cost_usd_total', 'Cost', ['provider']);
  for (let i = 0; i < 10; i++) cost.add({ provider: 'p' }, '0.1');
  cost.add({ provider: 'p' }, '0.0000000003');
  assert.match(r.render(), /^cost_usd_total\{provider="p"\} 1\.0000000003$/m);
  assert.throws(() => cost.add({ provider: 'p' }, '-1'), /only increase/);
});

test('beyond maxSeries new label combinations fold into one _other series', () => {
  const r = new Registry({ maxSeries: 2 });
  const c = r.counter('req_total', 'Requests', ['model']);
  for (const m of ['a', 'b', 'c', 'd', 'a']) c.inc({ model: m });
  assert.deepEqual(r.render().split('\n').filter((l) => l.startsWith('req_total')),
    ['req_total{model="a"} 2', 'req_total{model="b"} 1', 'req_total{model="_other"} 2']);
});

test('the gateway metric set renders every metric and reads writer stats at render time', () => {
  const m = createGatewayMetrics();
  m.requestsTotal.inc({ route: '/v1/chat/completions', model: 'openai/gpt-x', provider: 'openai', status: '200' });
  m.requestDuration.observe({ route: '/v1/chat/completions', provider: 'openai' }, 0.2);
  m.timeToFirstToken.observe({ route: '/v1/chat/completions', provider: 'openai' }, 0.08);
  m.tokensTotal.inc({ type: 'input', provider: 'openai' }, 120);
  m.costUsdTotal.add({ provider: 'openai' }, '0.00012');
  m.costUsdTotal.add({ provider: 'openai' }, '0.00003');
  m.upstreamErrorsTotal.inc({ provider: 'anthropic', reason: 'status_5xx' });
  m.fallbacksTotal.inc({ from_provider: 'anthropic' });
  m.configReloadsTotal.inc({ result: 'ok' });
  m.rateLimitedTotal.inc({ reason: 'rpm' });
  m.budgetTrimmedTotal.inc({ mode: 'router' });
  m.limiterErrorsTotal.inc();
  const before = m.registry.render();
  assert.match(before, /^# TYPE gateway_writer_queue_depth gauge$/m);
  assert.doesNotMatch(before, /^gateway_writer_queue_depth /m);
  // The store's read retries: no sample before a store is attached, nor for a store without them (SQLite).
  m.attachStore({});
  assert.doesNotMatch(m.registry.render(), /^gateway_store_read_retries_total /m);
  const pgStore = { readRetries: 2, discardedConnections: 0 };
  m.attachStore(pgStore);
  pgStore.readRetries = 3;
  pgStore.discardedConnections = 4;
  let queued = 3;
  m.attachWriter(() => ({ queued, queuedBytes: 0, dropped: 1, flushed: 40, failures: 2, rejected: 0, repaired: 0, salvaged: 0, consecutiveFailures: 0, lastDropAt: 0 }));
  m.attachStoredResponses(() => ({ waiting: 4, failures: 6, dropped: 1 }));
  queued = 7;
  const text = m.registry.render();
  for (const line of [
    'gateway_requests_total{route="/v1/chat/completions",model="openai/gpt-x",provider="openai",status="200"} 1',
    'gateway_request_duration_seconds_bucket{route="/v1/chat/completions",provider="openai",le="0.25"} 1',
    'gateway_request_duration_seconds_bucket{route="/v1/chat/completions",provider="openai",le="0.1"} 0',
    'gateway_time_to_first_token_seconds_count{route="/v1/chat/completions",provider="openai"} 1',
    'gateway_tokens_total{type="input",provider="openai"} 120',
    'gateway_cost_usd_total{provider="openai"} 0.00015',
    'gateway_upstream_errors_total{provider="anthropic",reason="status_5xx"} 1',
    'gateway_fallbacks_total{from_provider="anthropic"} 1',
    'gateway_config_reloads_total{result="ok"} 1',
    'gateway_rate_limited_total{reason="rpm"} 1',
    'gateway_budget_trimmed_total{mode="router"} 1',
    'gateway_limiter_errors_total 1',
    'gateway_writer_queue_depth 7',
    'gateway_writer_dropped_total 1',
    'gateway_writer_flushed_total 40',
    'gateway_writer_failures_total 2',
    'gateway_stored_response_writes_waiting 4',
    'gateway_stored_response_write_failures_total 6',
    'gateway_stored_response_writes_dropped_total 1',
    'gateway_store_read_retries_total 3',
    'gateway_store_connections_discarded_total 4',
  ]) assert.ok(text.split('\n').includes(line), `missing: ${line}`);
  const types = [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((x) => `${x[1]} ${x[2]}`);
  assert.equal(types.length, 32);
  for (const t of ['gateway_http_requests_total counter', 'gateway_dependency_up gauge', 'gateway_ready gauge', 'gateway_limiter_breaker_state gauge', 'gateway_limiter_breaker_opened_total counter',
    'gateway_router_decisions_pending gauge', 'gateway_router_decisions_dropped_total counter']) assert.ok(types.includes(t), t);
  // The router's gauges render no sample until a router is attached, then read it at render time.
  assert.ok(!text.includes('\ngateway_router_decisions_pending '));
  let pending = 3;
  m.attachRouter({ version: () => 9, recording: () => ({ pending, dropped: 2 }) });
  pending = 5;
  const after = m.registry.render().split('\n');
  for (const line of ['gateway_router_state_version 9', 'gateway_router_decisions_pending 5', 'gateway_router_decisions_dropped_total 2']) assert.ok(after.includes(line), `missing: ${line}`);
  assert.ok(types.includes('gateway_cost_usd_total counter'));
  assert.ok(types.includes('gateway_request_duration_seconds histogram'));
});

test('bound series share state with labelled calls; the series cap and increase-only rule still hold', () => {
  const r = new Registry({ maxSeries: 2 });
  const c = r.counter('bound_total', 'x', ['a']);
  const bound = c.bind({ a: 'one' });
  bound.inc();
  c.inc({ a: 'one' }, 2);
  bound.inc(4);
  assert.throws(() => bound.inc(-1), /only increase/);
  const h = r.histogram('bound_seconds', 'x', ['a'], [0.1, 1]);
  h.bind({ a: 'one' }).observe(0.05);
  h.observe({ a: 'one' }, 0.5);
  const d = r.decimalCounter('bound_usd_total', 'x', ['a']);
  d.bind({ a: 'one' }).add('0.1');
  d.add({ a: 'one' }, '0.2');
  assert.throws(() => d.bind({ a: 'one' }).add('-1'), /only increase/);
  c.bind({ a: 'two' }).inc();
  c.bind({ a: 'three' }).inc(); // beyond maxSeries: the shared _other series
  const text = r.render();
  assert.match(text, /^bound_total\{a="one"\} 7$/m);
  assert.match(text, /^bound_total\{a="_other"\} 1$/m);
  assert.match(text, /^bound_seconds_bucket\{a="one",le="0.1"\} 1$/m);
  assert.match(text, /^bound_seconds_bucket\{a="one",le="1"\} 2$/m);
  assert.match(text, /^bound_seconds_count\{a="one"\} 2$/m);
  assert.match(text, /^bound_usd_total\{a="one"\} 0.3$/m);
});
