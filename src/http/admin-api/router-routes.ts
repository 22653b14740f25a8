// GET /router: the router overview (the Router page's main call) for a time window, the caller's keys only;
// `bucket` and `tz` shape its time series as GET /usage's. GET /router/providers: the providers as this
// replica's router sees them now (src/router/providers-now.ts). GET /router/states and POST /router/states
// (admins): the learned-state versions, and a rollback to one of them or a reset to the priors
// (src/router/state-restore.ts), which this replica adopts at once and the others on their next poll.
// POST /router/preview: the dashboard's dry run, what the router would choose for a chat-completions
// body as one of the caller's keys (or none) would get it, every candidate listed; no model is called.
import { keyScope } from '../../dashboard/access.ts';
import { decisionView } from '../../dashboard/router-decision.ts';
import { routerOverview } from '../../dashboard/router-overview.ts';
import { GatewayError, invalidParam } from '../../gateway-error.ts';
import { providersNow } from '../../router/providers-now.ts';
import { listStates, REASON_MAX, restoreReason, restoreState, StateNotFound, type StateSummary } from '../../router/state-restore.ts';
import type { KeyRecord } from '../../store/types.ts';
import { dryRunBody, routerOf } from '../router-mode.ts';
import { sendApiJson } from './context.ts';
import { apiBody, jsonBody } from './session-routes.ts';
import { seriesParams } from './usage-routes.ts';
import { int, range, single } from './params.ts';
import type { ApiCall, ApiRoute } from './router.ts';

const stateView = (s: StateSummary) => ({
  version: s.version, created_at: s.createdAt, outcomes: s.outcomes, bytes: s.bytes, restored_at: s.restoredAt,
  origin: s.origin && { kind: s.origin.kind, from_version: s.origin.from, by: s.origin.by, reason: s.origin.reason },
});

/** The learned-state version this replica routes with (null: router mode is off). */
const serving = (c: ApiCall): number | null => c.svc.router?.learning.state.version ?? null;

/** The restore a POST body asks for: {"action": "rollback", "version": N} or {"action": "reset"}, with an optional "reason". */
function restoreBody(body: Record<string, unknown>): { from: number | null; reason: string | null } {
  const { action, version, reason } = body;
  if (action !== 'rollback' && action !== 'reset') throw invalidParam('action', 'action must be "rollback" (with "version") or "reset"');
  const why = restoreReason(reason);
  if (why === undefined) throw invalidParam('reason', `reason must be a string of at most ${REASON_MAX} characters`);
  if (action === 'reset') {
    if (version !== undefined && version !== null) throw invalidParam('version', 'a reset takes no version (it returns to the priors); use action "rollback" to go back to a version');
    return { from: null, reason: why };
  }
  if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 1) throw invalidParam('version', 'version must be a whole number of at least 1 (a stored state version: GET /router/states)');
  return { from: version, reason: why };
}

export function routerApi(): ApiRoute[] {
  return [
    {
      method: 'GET', path: '/router', who: 'any',
      handler: async (c) => {
        const { from, to } = range(c.query, 7 * 86_400_000);
        const top = int(c.query, 'top', 1, 50, 10);
        const { bucket, tz } = seriesParams(c.query, from, to);
        const qualitySignals = [...new Set(c.svc.holder.current.router.qualitySignals.map((s) => s.metric))];
        try {
          sendApiJson(c.res, 200, await routerOverview(c.d.store.sql, { from, to, top, qualitySignals, bucket, tz }, c.access));
        } catch (e) {
          if (e instanceof RangeError) throw invalidParam('bucket', 'too many buckets for this range (at most 2000): choose a larger bucket');
          throw e;
        }
      },
    },
    {
      // This replica's view of the providers now (memory only): ejections, failures in a row, measured latency and error rate.
      method: 'GET', path: '/router/providers', who: 'any',
      handler: async (c) => {
        sendApiJson(c.res, 200, { data: providersNow(c.svc.holder.current.providers.keys(), c.svc.health, c.svc.router?.stats ?? null), as_of: new Date().toISOString() });
      },
    },
    {
      method: 'POST', path: '/router/preview', who: 'any',
      handler: async (c) => {
        const router = routerOf(c.svc);
        const cfg = c.svc.holder.current;
        const keyId = single(c.query, 'key_id');
        let key: KeyRecord | null = null;
        if (keyId) {
          // A member ranks as their own keys only; a key they cannot see is not found, as on GET /keys/:id.
          const scope = keyScope(c.access);
          key = scope && !scope.includes(keyId) ? null : await c.d.store.getKey(keyId);
          if (!key) throw new GatewayError('resource_not_found', `API key ${keyId} not found`, { param: 'key_id' });
          if (key.revokedAt !== null) throw invalidParam('key_id', `API key ${key.name} is revoked: its requests are refused before routing`);
        }
        const body = dryRunBody(c.svc, cfg, await apiBody(c), 'openai-chat', key);
        const out = await router.preview(cfg, body, 'openai-chat', key, '/v1/chat/completions');
        sendApiJson(c.res, 200, { decision: decisionView(out.decision), defaults_applied: out.defaultsApplied, key_id: key?.id ?? null });
      },
    },
    {
      method: 'GET', path: '/router/states', who: 'admin',
      handler: async (c) => {
        const limit = int(c.query, 'limit', 1, 1000, 50);
        sendApiJson(c.res, 200, { data: (await listStates(c.d.store.sql, limit)).map(stateView), serving_version: serving(c) });
      },
    },
    {
      method: 'POST', path: '/router/states', who: 'admin',
      handler: async (c) => {
        const req = restoreBody(await jsonBody(c));
        let stored: StateSummary;
        try {
          stored = await restoreState(c.d.store.sql, { ...req, by: c.caller.user.email });
        } catch (e) {
          if (e instanceof StateNotFound) throw new GatewayError('resource_not_found', e.message, { param: 'version' });
          throw e;
        }
        // This replica routes with it from now; the others adopt it on their next state poll.
        await c.svc.router?.learning.refresh();
        sendApiJson(c.res, 201, { state: stateView(stored), serving_version: serving(c) });
      },
    },
  ];
}
