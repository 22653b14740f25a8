// GET /router: the router overview (the Router page's one call) for a time window, the caller's keys only;
// `bucket` and `tz` shape its time series as GET /usage's.
import { routerOverview } from '../../dashboard/router-overview.ts';
import { invalidParam } from '../../gateway-error.ts';
import { sendApiJson } from './context.ts';
import { seriesParams } from './usage-routes.ts';
import { int, range } from './params.ts';
import type { ApiRoute } from './router.ts';

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
  ];
}
