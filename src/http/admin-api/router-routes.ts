// GET /router: the router overview (the Router page's one call) for a time window, the caller's keys only.
import { routerOverview } from '../../dashboard/router-overview.ts';
import { sendApiJson } from './context.ts';
import { int, range } from './params.ts';
import type { ApiRoute } from './router.ts';

export function routerApi(): ApiRoute[] {
  return [
    {
      method: 'GET', path: '/router', who: 'any',
      handler: async (c) => {
        const { from, to } = range(c.query, 7 * 86_400_000);
        const top = int(c.query, 'top', 1, 50, 10);
        const qualitySignals = [...new Set(c.svc.holder.current.router.qualitySignals.map((s) => s.metric))];
        sendApiJson(c.res, 200, await routerOverview(c.d.store.sql, { from, to, top, qualitySignals }, c.access));
      },
    },
  ];
}
