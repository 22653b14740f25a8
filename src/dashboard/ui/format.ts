// Number, money, duration and time formatting for the pages (the viewer's locale and time zone).

export const timeZone = (): string => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

const intFmt = new Intl.NumberFormat('en-US');
export const int = (n: number | null | undefined): string => (n === null || n === undefined ? '–' : intFmt.format(Math.round(n)));

/** Compact counts: 1.2k, 3.4M. */
export function compact(n: number | null | undefined): string {
  if (n === null || n === undefined) return '–';
  const a = Math.abs(n);
  if (a >= 1e9) return `${(n / 1e9).toFixed(a >= 1e10 ? 0 : 1)}B`;
  if (a >= 1e6) return `${(n / 1e6).toFixed(a >= 1e7 ? 0 : 1)}M`;
  if (a >= 1e4) return `${(n / 1e3).toFixed(a >= 1e5 ? 0 : 1)}k`;
  return Number.isInteger(n) || a >= 10 ? intFmt.format(Math.round(n)) : n.toFixed(1);
}

/** USD from an exact decimal string: cents above $1, more digits below (small per-request costs stay readable, never as an exponent). */
export function usd(s: string | null | undefined): string {
  if (s === null || s === undefined) return '–';
  const n = Number(s);
  if (!Number.isFinite(n)) return `$${s}`;
  if (n === 0) return '$0';
  const a = Math.abs(n);
  if (a >= 1) return `$${n.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
  if (a >= 0.01) return `$${n.toFixed(4)}`;
  // Three significant digits in plain decimals: toPrecision writes exponents below 1e-6 ($4.00e-7 for a
  // cached-token request) and keeps trailing zeros ($0.00000100).
  const digits = Math.min(100, 2 - Math.floor(Math.log10(a)));
  return `$${n.toFixed(digits).replace(/\.?0+$/, '')}`;
}

/** A round amount as an axis label: $0, $0.000001, $0.05, $1, $1,000 (no trailing zeros, never an exponent). */
export function usdTick(n: number): string {
  if (n === 0) return '$0';
  if (Math.abs(n) >= 1) return `$${n.toLocaleString('en-US', { maximumFractionDigits: 2 })}`;
  const digits = Math.min(100, 2 - Math.floor(Math.log10(Math.abs(n))));
  return `$${n.toFixed(digits).replace(/\.?0+$/, '')}`;
}

/** A ratio as an axis label, with the digits it has: 0.025 is "2.5%" (pct(n, 0) wrote "3%"). */
export const pctTick = (r: number): string => `${Number((r * 100).toPrecision(12))}%`;

export function ms(n: number | null | undefined): string {
  if (n === null || n === undefined) return '–';
  if (n >= 60_000) return `${(n / 60_000).toFixed(1)} min`;
  if (n >= 1000) return `${(n / 1000).toFixed(n >= 10_000 ? 0 : 1)} s`;
  return `${Math.round(n)} ms`;
}

export const pct = (r: number | null | undefined, digits = 1): string => (r === null || r === undefined ? '–' : `${(r * 100).toFixed(digits)}%`);

export function dateTime(iso: string | null | undefined, tz = timeZone()): string {
  if (!iso) return '–';
  return new Date(iso).toLocaleString('en-GB', { timeZone: tz, year: 'numeric', month: 'short', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

/**
 * A bucket start as its axis label for the bucket size. An hour the clocks go back over is shown twice
 * (01:00 and 01:00 again in New York on 1 November): each of the two is labelled with its UTC offset
 * ("01:00 GMT-4", "01:00 GMT-5"), so the chart's labels and dot titles tell them apart.
 */
export function bucketLabel(iso: string, bucket: string, tz = timeZone()): string {
  const d = new Date(iso);
  if (bucket === 'hour') {
    const opts: Intl.DateTimeFormatOptions = { timeZone: tz, day: '2-digit', month: 'short', hour: '2-digit', minute: '2-digit' };
    const at = (t: number): string => new Date(t).toLocaleString('en-GB', opts);
    const label = at(d.getTime());
    const repeated = at(d.getTime() - 3_600_000) === label || at(d.getTime() + 3_600_000) === label;
    return repeated ? d.toLocaleString('en-GB', { ...opts, timeZoneName: 'short' }) : label;
  }
  if (bucket === 'month') return d.toLocaleString('en-GB', { timeZone: tz, month: 'short', year: 'numeric' });
  return d.toLocaleString('en-GB', { timeZone: tz, day: '2-digit', month: 'short' });
}

export function relative(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return 'never';
  const d = Date.parse(iso) - now;
  const a = Math.abs(d);
  const unit = a < 60_000 ? [Math.round(d / 1000), 's'] : a < 3_600_000 ? [Math.round(d / 60_000), 'min'] : a < 86_400_000 ? [Math.round(d / 3_600_000), 'h'] : [Math.round(d / 86_400_000), 'd'];
  return d < 0 ? `${-unit[0]!} ${unit[1]} ago` : `in ${unit[0]} ${unit[1]}`;
}

const HOUR = 3_600_000, DAY = 24 * HOUR, YEAR = 365.25 * DAY, MONTH = YEAR / 12;

/**
 * How long until `iso`, in the unit a reader takes in at a glance: minutes, hours (under 2 days), days
 * (under 2 months), months (under 2 years), then years to one decimal ("in about 3.6 years", not
 * "in 1327 d"); past a century "in more than 100 years". A time already past is "now".
 */
export function timeUntil(iso: string, now = Date.now()): string {
  const d = Date.parse(iso) - now;
  if (!Number.isFinite(d) || d <= 0) return 'now';
  const plural = (n: number, unit: string): string => `${n} ${unit}${n === 1 ? '' : 's'}`;
  if (d < HOUR) return `in ${plural(Math.max(1, Math.round(d / 60_000)), 'minute')}`;
  if (d < 2 * DAY) return `in ${plural(Math.round(d / HOUR), 'hour')}`;
  if (d < 2 * MONTH) return `in ${plural(Math.round(d / DAY), 'day')}`;
  if (d < 2 * YEAR) return `in about ${plural(Math.round(d / MONTH), 'month')}`;
  if (d < 100 * YEAR) return `in about ${(d / YEAR).toFixed(1)} years`;
  return 'in more than 100 years';
}
