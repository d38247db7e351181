import assert from 'node:assert/strict';
import { bestTimes } from '../util/timing.js';
import { describe, it } from 'node:test';
import { performance } from 'node:perf_hooks';
import { quantityError, QUANTITY_FORMAT_ERROR, QUANTITY_SUFFIX_ERROR, scanQuantity } from '../../src/machinery/quantity-syntax.js';
import { parseQuantity } from '../../src/schema/cel/quantity.js';

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
});
