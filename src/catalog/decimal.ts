// Exact decimal arithmetic on plain decimal strings ("0.0000025"), backed by BigInt.
// Prices and costs never pass through floats: float sums drift, and bills must add up exactly.

/** A decimal as an integer mantissa and a count of fractional digits: value = int / 10^scale. */
type Fixed = { int: bigint; scale: number };

const DECIMAL_RE = /^-?\d+(\.\d+)?$/;

/** True for plain decimal notation: optional minus, digits, optional fraction. No exponent, no "+", no bare ".5". */
export function isDecimalString(s: string): boolean {
  return DECIMAL_RE.test(s);
}

function parse(s: string): Fixed {
  if (!DECIMAL_RE.test(s)) throw new TypeError(`not a decimal string: ${JSON.stringify(s)}`);
  const negative = s.startsWith('-');
  const body = negative ? s.slice(1) : s;
  const dot = body.indexOf('.');
  const digits = dot < 0 ? body : body.slice(0, dot) + body.slice(dot + 1);
  const int = BigInt(digits);
  return { int: negative ? -int : int, scale: dot < 0 ? 0 : body.length - dot - 1 };
}

const POW10: bigint[] = Array.from({ length: 64 }, (_, i) => 10n ** BigInt(i));

function pow10(n: number): bigint {
  return n < POW10.length ? POW10[n]! : 10n ** BigInt(n);
}

/** Brings both operands to the larger scale so their mantissas can be added or compared. */
function align(a: Fixed, b: Fixed): [bigint, bigint, number] {
  const scale = Math.max(a.scale, b.scale);
  return [a.int * pow10(scale - a.scale), b.int * pow10(scale - b.scale), scale];
}

function render(f: Fixed): string {
  if (f.int === 0n) return '0';
  const negative = f.int < 0n;
  let digits = (negative ? -f.int : f.int).toString();
  let scale = f.scale;
  // Drop trailing fractional zeros so equal values always render identically.
  while (scale > 0 && digits.endsWith('0')) { digits = digits.slice(0, -1); scale--; }
  if (scale > 0) {
    digits = digits.padStart(scale + 1, '0');
    digits = `${digits.slice(0, digits.length - scale)}.${digits.slice(digits.length - scale)}`;
  }
  return negative ? `-${digits}` : digits;
}

// Already in normal form: "0", or a non-zero value with no leading zeros and no trailing fractional zeros.
const NORMAL_RE = /^(?:0|-?(?:[1-9]\d*(?:\.\d*[1-9])?|0\.\d*[1-9]))$/;

/** Normal form: no trailing fractional zeros, no leading zeros, "0" for any zero (also "-0.00"). */
export function formatDecimal(s: string): string {
  // Costs are stored already normal; skipping the BigInt round trip keeps the record write path cheap.
  return NORMAL_RE.test(s) ? s : render(parse(s));
}

export function addDecimal(a: string, b: string): string {
  const [x, y, scale] = align(parse(a), parse(b));
  return render({ int: x + y, scale });
}

export function subDecimal(a: string, b: string): string {
  const [x, y, scale] = align(parse(a), parse(b));
  return render({ int: x - y, scale });
}

let lastAmount = '0';
let lastParsed: Fixed = { int: 0n, scale: 0 };

/**
 * A running exact sum kept as mantissa and scale: adding parses only the addend (no render of the
 * total per addition), for counters that add on every request and are read rarely.
 */
export class DecimalSum {
  #int = 0n;
  #scale = 0;
  add(amount: string): void {
    // One amount is often added to several sums in a row (a cost to each rollup cell it belongs to).
    if (amount !== lastAmount) { lastAmount = amount; lastParsed = parse(amount); }
    const a = lastParsed;
    if (a.scale > this.#scale) { this.#int = this.#int * pow10(a.scale - this.#scale) + a.int; this.#scale = a.scale; }
    else this.#int += a.int * pow10(this.#scale - a.scale);
  }
  toString(): string { return render({ int: this.#int, scale: this.#scale }); }
}

/** Sum of any number of decimal strings; "0" for none. */
export function sumDecimals(values: readonly string[]): string {
  return values.reduce((acc, v) => addDecimal(acc, v), '0');
}

// Price strings come from the catalog, a finite set: parse each once (bounded, in case of abuse).
const parsedPrices = new Map<string, Fixed>();
function parseCached(s: string): Fixed {
  let f = parsedPrices.get(s);
  if (f === undefined) {
    f = parse(s);
    if (parsedPrices.size >= 10_000) parsedPrices.clear();
    parsedPrices.set(s, f);
  }
  return f;
}

/**
 * Σ price × count for integer counts, rendered once: the bill of one call. Zero counts cost nothing
 * to compute, so a bill with nine price kinds of which three are used does three multiplications.
 */
export function sumOfProducts(terms: ReadonlyArray<readonly [price: string, count: number]>): string {
  let int = 0n;
  let scale = 0;
  for (const [price, n] of terms) {
    if (n === 0) continue;
    if (!Number.isSafeInteger(n)) throw new TypeError(`count must be a safe integer, got ${n}`);
    const p = parseCached(price);
    if (p.int === 0n) continue;
    const term = p.int * BigInt(n);
    if (p.scale > scale) { int = int * pow10(p.scale - scale) + term; scale = p.scale; }
    else int += term * pow10(scale - p.scale);
  }
  return render({ int, scale });
}

/** a × b where b is an integer count (number must be a safe integer), a bigint, or another decimal string. */
export function mulDecimal(a: string, b: string | number | bigint): string {
  const x = parse(a);
  let y: Fixed;
  if (typeof b === 'bigint') y = { int: b, scale: 0 };
  else if (typeof b === 'number') {
    if (!Number.isSafeInteger(b)) throw new TypeError(`mulDecimal count must be a safe integer, got ${b}`);
    y = { int: BigInt(b), scale: 0 };
  } else y = parse(b);
  return render({ int: x.int * y.int, scale: x.scale + y.scale });
}

export function compareDecimal(a: string, b: string): -1 | 0 | 1 {
  const [x, y] = align(parse(a), parse(b));
  return x < y ? -1 : x > y ? 1 : 0;
}

/** a × 10^exp exactly (exp may be negative): "2.5" with -6 gives "0.0000025" (per-million to per-token). */
export function shiftDecimal(a: string, exp: number): string {
  if (!Number.isInteger(exp)) throw new TypeError(`shiftDecimal exponent must be an integer, got ${exp}`);
  const x = parse(a);
  return exp >= 0 ? render({ int: x.int * pow10(exp), scale: x.scale }) : render({ int: x.int, scale: x.scale - exp });
}

/**
 * a ÷ b truncated toward zero to `places` fractional digits. Used where an exact quotient may not
 * exist (e.g. how many tokens a budget buys); callers choose the rounding by the places they ask for.
 */
export function divDecimal(a: string, b: string, places = 18): string {
  const x = parse(a);
  const y = parse(b);
  if (y.int === 0n) throw new RangeError('division by zero');
  // (x.int / 10^xs) / (y.int / 10^ys) = x.int * 10^(ys + places - xs) / y.int / 10^places
  const shift = y.scale + places - x.scale;
  const num = shift >= 0 ? x.int * pow10(shift) : x.int;
  const den = shift >= 0 ? y.int : y.int * pow10(-shift);
  return render({ int: num / den, scale: places });
}

/**
 * Exact decimal for a JavaScript number as written by its shortest round-trip form, so 2.5e-7 gives
 * "0.00000025" (not the binary expansion). Only for importing upstream data that arrives as JSON numbers.
 */
export function decimalFromNumber(n: number): string {
  if (!Number.isFinite(n)) throw new TypeError(`not a finite number: ${n}`);
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(n));
  if (!m) throw new TypeError(`cannot read number ${n}`);
  const base = `${m[1]}${m[2]}${m[3] ? `.${m[3]}` : ''}`;
  return shiftDecimal(base, m[4] ? Number(m[4]) : 0);
}

/** Nearest float, for display, sorting heuristics and comparisons against user-supplied numbers only. */
export function decimalToNumber(a: string): number {
  return Number(formatDecimal(a));
}
