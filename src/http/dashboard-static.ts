// GET /dashboard and /dashboard/*: the HTML shell for every page path (the client routes), and the
// dashboard's own assets under /dashboard/assets/ (never a file outside src/dashboard/ui). Strict CSP.
import type { Route } from './routes.ts';
import { GatewayError } from '../gateway-error.ts';
import { assetVersion, dashboardAssets, dashboardHtml } from '../dashboard/assets.ts';
import { SECURITY_HEADERS } from './admin-api/context.ts';
import type { Services } from './services.ts';

let html: Buffer | null = null;
const VERSIONED = /^assets\/v\/([A-Za-z0-9_-]{1,64})\/(.+)$/;

export function dashboardRoutes(svc: Services): Route[] {
  const handler: Route['handler'] = async (req, res, p) => {
    if (!svc.dashboard) throw new GatewayError('route_not_found', 'the dashboard is disabled (dashboard.enabled: false)');
    const rest = p.path.startsWith('/dashboard/') ? p.path.slice('/dashboard/'.length) : '';
    if (rest.startsWith('assets/')) {
      // Versioned URLs (the HTML's) never change content: cached for a year. A stale version (a page
      // open across an upgrade) gets today's file, revalidated like the unversioned paths.
      const v = VERSIONED.exec(rest);
      const asset = dashboardAssets().get(v ? v[2]! : rest.slice('assets/'.length));
      if (!asset) throw new GatewayError('route_not_found', `no dashboard asset ${rest}`);
      const cache = v && v[1] === assetVersion() ? 'public, max-age=31536000, immutable' : 'no-cache';
      if (req.headers['if-none-match'] === asset.etag) { res.writeHead(304, { ...SECURITY_HEADERS, etag: asset.etag, 'cache-control': cache }); res.end(); return; }
      res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': asset.type, 'content-length': asset.body.length, etag: asset.etag, 'cache-control': cache });
      res.end(asset.body);
      return;
    }
    html ??= Buffer.from(dashboardHtml(), 'utf8');
    res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': 'text/html; charset=utf-8', 'content-length': html.length, 'cache-control': 'no-store' });
    res.end(html);
  };
  return [
    { method: 'GET', pattern: '/dashboard', envelope: 'openai', auth: 'none', handler },
    { method: 'GET', pattern: '/dashboard/*', envelope: 'openai', auth: 'none', handler },
  ];
}
