// Exact decimal arithmetic: the values bills are built from must never drift like float sums do.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  addDecimal, compareDecimal, decimalFromNumber, divDecimal, formatDecimal, isDecimalString, mulDecimal,
  shiftDecimal, subDecimal, sumDecimals,
} from '../src/catalog/decimal.ts';

test('isDecimalString accepts plain decimals only', () => {
  for (const s of ['0', '12', '0.5', '-3.25', '000.100']) assert.equal(isDecimalString(s), true, s);
  for (const s of ['', '.5', '5.', '1e-6', '+1', '1,5', ' 1', 'NaN', '0x10', '1.2.3']) assert.equal(isDecimalString(s), false, s);
});

test('formatDecimal normalises', () => {
  assert.equal(formatDecimal('007.500'), '7.5');
  assert.equal(formatDecimal('0.000'), '0');
  assert.equal(formatDecimal('-0.00'), '0');
  assert.equal(formatDecimal('10'), '10');
  assert.equal(formatDecimal('0.00000025'), '0.00000025');
  // inputs already in normal form come back as they are; the others still normalize
  for (const s of ['0', '7', '-7', '0.5', '-0.5', '10.01', '123.000000000000000000001']) assert.equal(formatDecimal(s), s);
  for (const [s, want] of [['-0', '0'], ['00', '0'], ['-07', '-7'], ['1.50', '1.5'], ['0.0', '0'], ['-0.50', '-0.5'], ['010.10', '10.1']]) {
    assert.equal(formatDecimal(s!), want);
  }
  assert.throws(() => formatDecimal('.5'), TypeError);
  assert.throws(() => formatDecimal('5.'), TypeError);
  assert.throws(() => formatDecimal('2.5e-7'), TypeError);
});

test('addition and subtraction are exact where floats are not', () => {
  assert.notEqual(0.1 + 0.2, 0.3);
  assert.equal(addDecimal('0.1', '0.2'), '0.3');
  assert.equal(addDecimal('0.0000025', '0.00001'), '0.0000125');
  assert.equal(addDecimal('-0.5', '0.25'), '-0.25');
  assert.equal(subDecimal('1', '0.999999999999999999'), '0.000000000000000001');
  assert.equal(sumDecimals([]), '0');
  assert.equal(sumDecimals(Array.from({ length: 10 }, () => '0.1')), '1');
});

test('multiplication by counts, bigints and decimals', () => {
  assert.equal(mulDecimal('0.0000025', 1234), '0.003085');
  assert.equal(mulDecimal('0.000003', 1_000_000), '3');
  assert.equal(mulDecimal('0.01', 0n), '0');
  assert.equal(mulDecimal('1.5', '-2'), '-3');
  assert.equal(mulDecimal('0.000015', 12_345_678_901n), '185185.183515');
  assert.throws(() => mulDecimal('1', 1.5), TypeError);
  assert.throws(() => mulDecimal('1', 2 ** 60), TypeError);
});

test('comparison ignores representation', () => {
  assert.equal(compareDecimal('1.0', '1'), 0);
  assert.equal(compareDecimal('0.0000003', '0.000003'), -1);
  assert.equal(compareDecimal('10', '9.999999'), 1);
  assert.equal(compareDecimal('-1', '0'), -1);
});

test('shift, divide and import from numbers', () => {
  assert.equal(shiftDecimal('2.5', -6), '0.0000025');
  assert.equal(shiftDecimal('0.0000025', 6), '2.5');
  assert.equal(divDecimal('1', '3', 5), '0.33333');
  assert.equal(divDecimal('0.01', '0.000015', 0), '666');
  assert.throws(() => divDecimal('1', '0'), RangeError);
  assert.equal(decimalFromNumber(2.5e-7), '0.00000025');
  assert.equal(decimalFromNumber(0.075), '0.075');
  assert.equal(decimalFromNumber(1e21), '1000000000000000000000');
  assert.equal(decimalFromNumber(18.75), '18.75');
  assert.throws(() => decimalFromNumber(Number.NaN), TypeError);
});

test('DecimalSum adds exactly across scales and renders in normal form', async () => {
  const { DecimalSum, sumDecimals } = await import('../src/catalog/decimal.ts');
  const parts = ['0.1', '0.2', '0.0000001', '5', '0.0000000000000000001', '12.3400', '0'];
  const s = new DecimalSum();
  assert.equal(s.toString(), '0');
  for (const p of parts) s.add(p);
  assert.equal(s.toString(), sumDecimals(parts));
  assert.equal(s.toString(), '17.6400001000000000001');
  assert.throws(() => s.add('1e-3'), /not a decimal string/);
  // One amount added to several sums, interleaved with others (the sums share a parse of the last amount).
  const a = new DecimalSum(); const b = new DecimalSum(); const seen: string[] = [];
  for (let i = 0; i < 200; i++) {
    const amount = `0.${String((i * 7919) % 100000).padStart(5, '0')}${i % 3 === 0 ? '7' : ''}`;
    a.add(amount); b.add(amount); b.add('0.5'); seen.push(amount);
  }
  assert.equal(a.toString(), sumDecimals(seen));
  assert.equal(b.toString(), sumDecimals([...seen, ...seen.map(() => '0.5')]));
});
