import assert from 'node:assert/strict';
import { bestTimes } from '../util/timing.js';
import { describe, it } from 'node:test';
import { performance } from 'node:perf_hooks';
import { quantityError, QUANTITY_FORMAT_ERROR, QUANTITY_SUFFIX_ERROR, scanQuantity } from '../../src/machinery/quantity-syntax.js';
import { parseQuantity, Quantity } from '../../src/schema/cel/quantity.js';

describe('quantity syntax (apimachinery parseQuantityString and the suffixer)', () => {
  it('reads what ParseQuantity reads, and names the errors it gives', () => {
    for (const ok of ['1', '0', '1.5', '-2', '+3', '100m', '1Ki', '5Gi', '1e3', '1E-3', '2.5e+2', '.5', '1.', 'Ki', '+', '  7Mi  ']) assert.equal(quantityError(ok), undefined, ok);
    for (const bad of ['', 'x', '1x', '1.2.3', '1Mi!', '1 Mi', '1KiB']) assert.equal(quantityError(bad), QUANTITY_FORMAT_ERROR, bad);
    for (const bad of ['1Ki5', '1KK', '1e', '1e+', '1mm', '1iK', '--1']) assert.equal(quantityError(bad), QUANTITY_SUFFIX_ERROR, bad);
    assert.deepEqual(scanQuantity('-007.250Mi'), { negative: true, int: '7', frac: '250', base: 2, exponent: 20 });
  });

  it('scans a long run of digits followed by a wrong letter in linear time', () => {
    const time = (n: number) => {
      const s = `${'1'.repeat(n)}x`;
      let best = Infinity;
      for (let i = 0; i < 3; i++) {
        const t = performance.now();
        assert.equal(quantityError(s), QUANTITY_FORMAT_ERROR);
        assert.equal(parseQuantity(s), undefined);
        best = Math.min(best, performance.now() - t);
      }
      return best;
    };
    time(10_000);
    const [small, big] = bestTimes(() => [Math.max(time(100_000), 0.5), time(800_000)], ([a, b]) => b / a < 24);
    // A backtracking expression takes 64 times as long for 8 times the digits.
    assert.ok(big / small < 24, `100k digits: ${small.toFixed(2)} ms, 800k: ${big.toFixed(2)} ms`);
  });

  it('keeps the CEL library\'s exact values', () => {
    assert.equal(parseQuantity('1.5Gi')!.cmp(parseQuantity('1536Mi')!), 0);
    assert.equal(parseQuantity('100m')!.cmp(parseQuantity('0.1')!), 0);
    assert.equal(parseQuantity('1e3')!.asInteger(), 1000n);
    assert.equal(parseQuantity('1Ki5'), undefined);
  });

  it('rounds up to nano units and caps binary SI at 2^63-1, as ParseQuantity', () => {
    const q = (s: string) => parseQuantity(s)!;
    assert.equal(q('0.1n').cmp(q('1n')), 0);
    assert.equal(q('-0.1n').cmp(q('-1n')), 0);
    assert.equal(q('1.0000000001').cmp(q('1000000001n')), 0);
    assert.equal(q('1e-30').sign(), 1);
    assert.equal(q('0e-30').sign(), 0);
    assert.equal(q('1.5Ki').asInteger(), 1536n);
    assert.equal(q('0.001Ki').cmp(q('1.024')), 0);
    assert.equal(q('100Ei').asInteger(), 2n ** 63n - 1n);
    assert.equal(q(`${'9'.repeat(40)}Ki`).asInteger(), 2n ** 63n - 1n);
    assert.equal(q('100E').asInteger(), undefined);
    assert.equal(q('100E').cmp(q('100Ei')), 1);
    assert.equal(q('9223372036854775807').asInteger(), 2n ** 63n - 1n);
    assert.equal(q('9223372036854775808').asInteger(), undefined);
    assert.equal(q('-9223372036854775808').asInteger(), -(2n ** 63n));
    assert.equal(q('1.5').asInteger(), undefined);
    assert.equal(q('2.5m').add(q('-2.5m')).sign(), 0);
    assert.equal(q('1').sub(q('3')).cmp(q('-2')), 0);
    assert.equal(q('-1').add(q('3')).asInteger(), 2n);
    assert.equal(Quantity.ofInt(-5n).add(q('5')).sign(), 0);
    assert.equal(q('1.5Gi').asFloat(), 1610612736);
    assert.equal(q('-500m').asFloat(), -0.5);
    // ParseInt reads an exponent's leading zeros.
    assert.equal(q('1e+0000000000003').asInteger(), 1000n);
    // Exponents are read as an int64 and taken as an int32, wrapped: 2^32+3 is 3.
    assert.equal(q('1e4294967299').asInteger(), 1000n);
    assert.equal(q('1e-4294967293').asInteger(), 1000n);
    assert.equal(quantityError('1e9223372036854775807'), undefined);
    assert.equal(quantityError('1e9223372036854775808'), QUANTITY_SUFFIX_ERROR);
    assert.equal(quantityError(`1e${'0'.repeat(40)}7`), undefined);
  });

  it('parses, compares and adds quantities of millions of digits in linear time', () => {
    const time = (n: number) => {
      const s = `${'7'.repeat(n)}.${'3'.repeat(n)}Ki`;
      const d = `${'9'.repeat(n)}.${'1'.repeat(n)}`;
      const t = performance.now();
      const a = parseQuantity(d)!;
      assert.equal(a.add(a).sub(a).cmp(a), 0);
      assert.equal(parseQuantity(s)!.cmp(a), -1);
      return performance.now() - t;
    };
    time(20_000);
    const [small, big] = bestTimes(() => [Math.max(time(100_000), 0.5), time(800_000)], ([a, b]) => b / a < 24);
    assert.ok(big / small < 24, `100k digits: ${small.toFixed(2)} ms, 800k: ${big.toFixed(2)} ms`);
  });
});
