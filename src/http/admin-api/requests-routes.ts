// Request history: GET /requests (one keyset page, or one id), GET /requests/:id (the detail view's
// one call), GET /requests/export (CSV/JSONL, streamed) and GET /tail (the live tail, server-sent events).
import { addDecimal, compareDecimal, formatDecimal, mulDecimal } from '../../catalog/decimal.ts';
import { perMillion } from '../../catalog/cost.ts';
import { GatewayError, invalidParam } from '../../gateway-error.ts';
import {
  attemptsOf, extraOf, feedbackOf, historyExport, historyPage, historyRecord, MAX_PAGE, metadataOf, toSummary, type HistoryFilter,
} from '../../dashboard/history.ts';
import { routedIds, routerDecisionOf } from '../../dashboard/router-decision.ts';
import type { CostLine, RequestDetail, RequestPage, RequestSummary, TailEvent } from '../../dashboard/ui/api-types.ts';
import { num, strOrNull, type Row } from '../../store/rows.ts';
import { isUuid } from '../../util/uuid.ts';
import { SECURITY_HEADERS, sendApiJson } from './context.ts';
import { streamExport } from './export.ts';
import { bool, int, list, money, oneOf, single, time } from './params.ts';
import type { ApiCall, ApiRoute } from './router.ts';

export function historyFilter(q: URLSearchParams): HistoryFilter {
  const status = single(q, 'status');
  let s: HistoryFilter['status'];
  if (status === 'ok' || status === 'error') s = status;
  else if (status !== null && status !== '') {
    if (!/^\d{3}$/.test(status)) throw invalidParam('status', 'status must be ok, error or an HTTP status code');
    s = Number(status);
  }
  const f: HistoryFilter = {
    from: time(q, 'from'), to: time(q, 'to'), keys: list(q, 'key'), users: list(q, 'user'), models: list(q, 'model'), served: list(q, 'served'),
    providers: list(q, 'provider'), routes: list(q, 'route'), status: s, stream: bool(q, 'stream'), minCost: money(q, 'min_cost'),
    maxCost: money(q, 'max_cost'), feedback: bool(q, 'feedback'), partial: bool(q, 'partial'), routed: bool(q, 'routed'),
  };
  // As GET /usage refuses it: a reversed window is a mistake to name, not an empty page.
  if (f.from !== undefined && f.to !== undefined && f.from >= f.to) throw invalidParam('from', 'from must be before to');
  return Object.fromEntries(Object.entries(f).filter(([, v]) => v !== undefined)) as HistoryFilter;
}

/** Cost by token kind at the served model's current prices; `matches` says whether they add up to the stored cost. */
function costBreakdown(c: ApiCall, r: Row): { lines: CostLine[] | null; matches: boolean | null } {
  const model = strOrNull(r.served_model);
  const entry = model ? c.svc.holder.current.models.get(model) : undefined;
  if (!entry) return { lines: null, matches: null };
  const p = entry.model.pricing as unknown as Record<string, string | undefined>;
  const kinds: Array<[string, string, number]> = [
    ['input', 'prompt', num(r.input_tokens)], ['output', 'completion', num(r.output_tokens)],
    ['cache read', 'input_cache_read', num(r.cache_read_tokens)], ['cache write', 'input_cache_write', num(r.cache_write_tokens)],
  ];
  const lines: CostLine[] = [];
  let sum = '0';
  for (const [label, field, tokens] of kinds) {
    const price = p[field] ?? '0';
    if (tokens === 0 && price === '0') continue;
    const cost = mulDecimal(price, tokens);
    sum = addDecimal(sum, cost);
    lines.push({ kind: label, tokens, price_per_million_usd: formatDecimal(perMillion(price)), cost_usd: formatDecimal(cost) });
  }
  if (p.request && p.request !== '0') { sum = addDecimal(sum, p.request); lines.push({ kind: 'per request', tokens: 0, price_per_million_usd: '0', cost_usd: formatDecimal(p.request) }); }
  return { lines, matches: compareDecimal(sum, formatDecimal(String(r.cost_usd ?? '0'))) === 0 };
}

const EXPORT_COLUMNS = ['id', 'created_at', 'key_id', 'key_name', 'route', 'requested_model', 'served_model', 'provider', 'status', 'error_code', 'stream', 'latency_ms', 'ttft_ms', 'input_tokens', 'output_tokens', 'cost_usd', 'attempts', 'partial', 'routed'] as const;

/** A page of rows as summaries, each marked with whether the router's decision is recorded for it. */
async function summaries(c: ApiCall, rows: readonly Row[]): Promise<RequestSummary[]> {
  const routed = await routedIds(c.d.store.sql, rows.map((r) => String(r.id)));
  await c.d.nameKeys(rows.map((r) => strOrNull(r.key_id)));
  return rows.map((r) => toSummary(r, c.d.keyName, routed.has(String(r.id))));
}

export function requestsApi(): ApiRoute[] {
  return [
    {
      method: 'GET', path: '/requests', who: 'any',
      handler: async (c) => {
        const id = single(c.query, 'id');
        if (id) {
          const r = isUuid(id) ? await historyRecord(c.d.store.sql, id.toLowerCase(), c.access) : null;
          const page: RequestPage = { data: r ? await summaries(c, [r]) : [], next_cursor: null, scanned_to: null };
          sendApiJson(c.res, 200, page);
          return;
        }
        const cursor = single(c.query, 'cursor') ?? undefined;
        if (cursor !== undefined && !/^[0-9a-f-]{1,36}$/.test(cursor)) throw invalidParam('cursor', 'cursor is not one this API returned');
        const p = await historyPage(c.d.store.sql, historyFilter(c.query), c.access, await c.d.users.owners(), int(c.query, 'limit', 1, MAX_PAGE, 50), cursor);
        const page: RequestPage = { data: await summaries(c, p.rows), next_cursor: p.nextCursor, scanned_to: p.scannedTo };
        sendApiJson(c.res, 200, page);
      },
    },
    {
      method: 'GET', path: '/requests/export', who: 'any',
      handler: async (c) => {
        const format = oneOf(c.query, 'format', ['csv', 'jsonl'] as const, 'jsonl');
        const rows = historyExport(c.d.store.sql, historyFilter(c.query), c.access, await c.d.users.owners());
        async function* flat(): AsyncGenerator<Record<string, unknown>> { for await (const page of rows) yield* await summaries(c, page); }
        await streamExport(c.res, format, 'requests', EXPORT_COLUMNS, flat());
      },
    },
    {
      method: 'GET', path: '/requests/:id', who: 'any',
      handler: async (c) => {
        const id = c.ids[0]!.toLowerCase();
        const r = isUuid(id) ? await historyRecord(c.d.store.sql, id, c.access) : null;
        if (!r) throw new GatewayError('resource_not_found', `no request with id ${c.ids[0]}`, { param: 'id' });
        const cost = costBreakdown(c, r);
        const routing = await routerDecisionOf(c.d.store.sql, id);
        const keyId = strOrNull(r.key_id);
        await c.d.nameKeys([keyId]);
        const owner = keyId ? await c.d.users.keyOwner(keyId) : null;
        const ownerEmail = owner ? (await c.d.users.get(owner))?.email ?? null : null;
        const detail: RequestDetail = {
          ...toSummary(r, c.d.keyName, routing !== null), client_format: String(r.client_format), attempts_detail: attemptsOf(r),
          cache_read_tokens: num(r.cache_read_tokens), cache_write_tokens: num(r.cache_write_tokens), reasoning_tokens: num(r.reasoning_tokens),
          finish_reason: strOrNull(r.finish_reason), metadata: metadataOf(r), extra: extraOf(r), client_ip: strOrNull(r.client_ip),
          request_body: strOrNull(r.request_body), response_body: strOrNull(r.response_body), cost_breakdown: cost.lines,
          cost_breakdown_matches: cost.matches, feedback: await feedbackOf(c.d.store.sql, id), routing, key_owner: ownerEmail,
        };
        sendApiJson(c.res, 200, detail);
      },
    },
    { method: 'GET', path: '/tail', who: 'any', handler: (c) => tail(c) },
  ];
}

/** One SSE stream per page: batches of records as they are recorded; ends when the session does. */
async function tail(c: ApiCall): Promise<void> {
  const { res, req } = c;
  res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no' });
  res.write('retry: 3000\n\n');
  const scope = c.access.role === 'admin' ? null : new Set(c.access.keyIds);
  const send = (events: TailEvent[], dropped: number): void => { res.write(`data: ${JSON.stringify({ events, dropped })}\n\n`); };
  const unsubscribe = c.d.tail.subscribe((keyId) => scope === null || (keyId !== null && scope.has(keyId)), send);
  // A heartbeat keeps proxies from closing an idle stream; each one also re-checks the session.
  const beat = setInterval(() => {
    res.write(': ok\n\n');
    if (c.caller.via === 'session') {
      c.d.sessions.lookup(c.caller.token).then((s) => { if (!s) res.end(); }, () => {});
    }
  }, 15_000);
  await new Promise<void>((done) => {
    const end = (): void => { clearInterval(beat); unsubscribe(); done(); };
    req.once('close', end);
    res.once('close', end);
  });
}
