// The dashboard's static files, read once from src/dashboard/ui: TypeScript modules are served as
// JavaScript with their types stripped by Node's own stripper (no bundler, no build step: the browser
// loads the same files `tsc` checks), CSS and SVG as they are. Each asset carries a content hash (ETag).
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { stripTypeScriptTypes } from 'node:module';
import { join, relative, sep } from 'node:path';

export type Asset = { body: Buffer; type: string; etag: string };

const UI_DIR = join(import.meta.dirname, 'ui');
const TYPES: Record<string, string> = { '.ts': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.svg': 'image/svg+xml' };
const NAME_RE = /^[a-z0-9-]+(\/[a-z0-9-]+)*\.(ts|css|svg)$/;

/**
 * Type stripping is flagged experimental in Node 26 and announces it once on stderr; the stripper's
 * output is plain JavaScript with the same positions, and the tests load every module through it.
 */
function strip(source: string): string {
  const emit = process.emitWarning;
  process.emitWarning = () => {};
  try { return stripTypeScriptTypes(source, { mode: 'strip' }); } finally { process.emitWarning = emit; }
}

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]));
}

let cache: Map<string, Asset> | null = null;

/** Every servable asset by its path under ui/ (e.g. `pages/keys.ts`); built on first use. */
export function dashboardAssets(): Map<string, Asset> {
  if (cache) return cache;
  const out = new Map<string, Asset>();
  for (const file of walk(UI_DIR)) {
    const name = relative(UI_DIR, file).split(sep).join('/');
    if (!NAME_RE.test(name) || name.endsWith('.test.ts')) continue;
    const ext = name.slice(name.lastIndexOf('.'));
    const raw = readFileSync(file, 'utf8');
    const body = Buffer.from(ext === '.ts' ? strip(raw) : raw, 'utf8');
    out.set(name, { body, type: TYPES[ext]!, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` });
  }
  cache = out;
  return out;
}

/**
 * One version for the whole UI (a hash over every asset's hash): assets are served under
 * /dashboard/assets/v/<version>/ with a year of immutable caching, so a page load after the first
 * fetches no module at all, and a new gateway build changes every URL at once.
 */
let version: string | null = null;
export function assetVersion(): string {
  if (version) return version;
  const all = dashboardAssets();
  const h = createHash('sha256');
  for (const name of [...all.keys()].sort()) h.update(`${name}\0${all.get(name)!.etag}\0`);
  version = h.digest('base64url').slice(0, 16);
  return version;
}

/**
 * The HTML shell every dashboard page starts from: no inline script or style (the CSP forbids both).
 * Every module is preloaded at once, so the browser fetches them in parallel instead of discovering
 * the import graph level by level (three round trips on the first load).
 */
export function dashboardHtml(): string {
  const base = `/dashboard/assets/v/${assetVersion()}`;
  const modules = [...dashboardAssets().keys()].filter((n) => n.endsWith('.ts') && n !== 'main.ts').sort();
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Gateway dashboard</title>
<link rel="icon" href="${base}/icon.svg" type="image/svg+xml">
<link rel="stylesheet" href="${base}/style.css">
<script type="module" src="${base}/main.ts"></script>
${modules.map((m) => `<link rel="modulepreload" href="${base}/${m}">`).join('\n')}
</head>
<body>
<div id="app"><p class="loading">Loading…</p></div>
<noscript>The dashboard needs JavaScript.</noscript>
</body>
</html>
`;
}
