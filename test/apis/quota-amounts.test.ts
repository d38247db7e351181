/**
 * Quota arithmetic as resource.Quantity does it: sums keep their first term's format (a zero takes the other's),
 * and print in canonical form (Quantity.String).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addAmounts, amountOf, amountsOf, formatAmount, prettyAmounts, subtractNonNegative } from '../../src/apis/core/quota-amounts.js';

const canonical = (s: string) => formatAmount(amountOf(s)!);

describe('quota amounts', () => {
  it('print quantities in canonical form, as Quantity.String', () => {
    const cases: Array<[string, string]> = [
      ['1000', '1k'],
      ['1500', '1500'],
      ['0.5', '500m'],
      ['1000m', '1'],
      ['2048', '2048'],
      ['0', '0'],
      ['1024Mi', '1Gi'],
      ['1536Mi', '1536Mi'],
      ['512', '512'],
      ['1Ki', '1Ki'],
      ['0.5Gi', '512Mi'],
      ['1e3', '1e3'],
      ['1500e-3', '1500e-3'],
      ['100n', '100n'],
      ['-2k', '-2k'],
      ['1e21', '1e21'],
      ['1e100', '10e99'],
    ];
    for (const [input, want] of cases) assert.equal(canonical(input), want, input);
  });

  it('add and subtract as quota.Add and SubtractWithNonNegativeResult', () => {
    const sum = addAmounts(amountsOf({ 'limits.memory': '0', pods: '1', cpu: '600m' }), amountsOf({ 'limits.memory': '512Mi', pods: '1', cpu: '400m', extra: '1' }));
    assert.equal(prettyAmounts(sum), 'cpu=1,extra=1,limits.memory=512Mi,pods=2');
    assert.equal(prettyAmounts(addAmounts(sum, amountsOf({ 'limits.memory': '512Mi' }))), 'cpu=1,extra=1,limits.memory=1Gi,pods=2');
    assert.equal(prettyAmounts(subtractNonNegative(amountsOf({ a: '1', b: '5' }), amountsOf({ a: '3', b: '2' }))), 'a=0,b=3');
  });
});
