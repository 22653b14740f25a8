// The router-bench plot: score against cost per prompt (log scale) for the router, the kNN
// baseline, their hulls, every single model and the oracle, as a standalone SVG document.
import { hull, type Point } from './hull.ts';

export type PlotInput = {
  title: string;
  curves: Array<{ name: string; points: Point[]; color: string }>;
  singles: Array<Point & { model: string }>;
  oracle: Point;
};

const W = 900, H = 600, M = { l: 70, r: 250, t: 40, b: 60 };

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

export function plotSvg(p: PlotInput): string {
  const all = [...p.curves.flatMap((c) => c.points), ...p.singles, p.oracle].filter((x) => x.cost > 0);
  const lx0 = Math.log10(Math.min(...all.map((x) => x.cost))) - 0.05, lx1 = Math.log10(Math.max(...all.map((x) => x.cost))) + 0.05;
  const ys = all.map((x) => x.score);
  const y0 = Math.max(0, Math.floor((Math.min(...ys) - 0.02) * 20) / 20), y1 = Math.min(1, Math.ceil((Math.max(...ys) + 0.02) * 20) / 20);
  const X = (c: number) => M.l + ((Math.log10(Math.max(c, 10 ** lx0)) - lx0) / (lx1 - lx0)) * (W - M.l - M.r);
  const Y = (s: number) => H - M.b - ((s - y0) / (y1 - y0 || 1)) * (H - M.t - M.b);
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`);
  out.push(`<rect width="${W}" height="${H}" fill="white"/>`);
  out.push(`<text x="${M.l}" y="24" font-size="15">${esc(p.title)}</text>`);
  // Axes with decade ticks on x and 0.05 ticks on y.
  out.push(`<line x1="${M.l}" y1="${H - M.b}" x2="${W - M.r}" y2="${H - M.b}" stroke="black"/><line x1="${M.l}" y1="${M.t}" x2="${M.l}" y2="${H - M.b}" stroke="black"/>`);
  for (let e = Math.ceil(lx0 * 2) / 2; e <= lx1; e += 0.5) {
    const x = X(10 ** e);
    out.push(`<line x1="${x}" y1="${M.t}" x2="${x}" y2="${H - M.b}" stroke="#eee"/><text x="${x}" y="${H - M.b + 16}" text-anchor="middle">${(10 ** e).toExponential(1)}</text>`);
  }
  for (let s = y0; s <= y1 + 1e-9; s += 0.05) {
    const y = Y(s);
    out.push(`<line x1="${M.l}" y1="${y}" x2="${W - M.r}" y2="${y}" stroke="#eee"/><text x="${M.l - 6}" y="${y + 4}" text-anchor="end">${s.toFixed(2)}</text>`);
  }
  out.push(`<text x="${(M.l + W - M.r) / 2}" y="${H - 18}" text-anchor="middle">mean cost per prompt, USD (log scale)</text>`);
  out.push(`<text x="18" y="${(M.t + H - M.b) / 2}" text-anchor="middle" transform="rotate(-90 18 ${(M.t + H - M.b) / 2})">mean score</text>`);
  const path = (pts: Point[]) => pts.filter((x) => x.cost > 0).map((x, i) => `${i ? 'L' : 'M'}${X(x.cost).toFixed(1)},${Y(x.score).toFixed(1)}`).join(' ');
  let ly = M.t + 10;
  const legend = (color: string, label: string, dash = '') => {
    out.push(`<line x1="${W - M.r + 15}" y1="${ly}" x2="${W - M.r + 40}" y2="${ly}" stroke="${color}" stroke-width="2" ${dash}/><text x="${W - M.r + 46}" y="${ly + 4}">${esc(label)}</text>`);
    ly += 18;
  };
  for (const c of p.curves) {
    out.push(`<path d="${path(c.points)}" fill="none" stroke="${c.color}" stroke-width="1.5" opacity="0.6"/>`);
    for (const x of c.points) if (x.cost > 0) out.push(`<circle cx="${X(x.cost).toFixed(1)}" cy="${Y(x.score).toFixed(1)}" r="2" fill="${c.color}"/>`);
    out.push(`<path d="${path(hull(c.points))}" fill="none" stroke="${c.color}" stroke-width="2" stroke-dasharray="6 3"/>`);
    legend(c.color, `${c.name} (dashed: hull)`);
  }
  out.push(`<path d="${path(hull(p.singles))}" fill="none" stroke="#888" stroke-width="2" stroke-dasharray="2 3"/>`);
  legend('#888', 'single-model hull', 'stroke-dasharray="2 3"');
  for (const s of p.singles) {
    out.push(`<circle cx="${X(s.cost).toFixed(1)}" cy="${Y(s.score).toFixed(1)}" r="4" fill="#444"/><text x="${(X(s.cost) + 6).toFixed(1)}" y="${(Y(s.score) - 5).toFixed(1)}" font-size="10" fill="#444">${esc(s.model)}</text>`);
  }
  out.push(`<path d="M${X(p.oracle.cost) - 6},${Y(p.oracle.score)} l6,-6 l6,6 l-6,6 z" fill="#c00"/><text x="${X(p.oracle.cost) + 9}" y="${Y(p.oracle.score) + 4}" fill="#c00">oracle</text>`);
  out.push('</svg>');
  return out.join('\n') + '\n';
}
