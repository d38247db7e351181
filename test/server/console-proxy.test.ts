/** The web console's credentials never leave kapi through the aggregation proxy, in either direction. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { proxiedHeaders } from '../../src/server/proxy.js';
import { setsConsoleCookie, withoutConsoleCookie } from '../../src/server/console.js';

describe('the console session and aggregated servers', () => {
  it('drops the console\'s cookie and CSRF header from a proxied request, keeping the other cookies', () => {
    const out = proxiedHeaders({ cookie: 'a=1; __Host-kapi-console=secret; b=2', 'x-kapi-csrf': 'token', accept: 'application/json' }, { name: 'alice', uid: '', groups: [] });
    assert.equal(out.cookie, 'a=1; b=2');
    assert.equal(out['x-kapi-csrf'], undefined);
    assert.equal(out['x-remote-user'], 'alice');
    const only = proxiedHeaders({ cookie: '__Host-kapi-console=secret; __host-KAPI-console=x' }, undefined);
    assert.equal(only.cookie, undefined);
  });

  it('knows a Set-Cookie of the console\'s cookie, whatever its case', () => {
    assert.equal(setsConsoleCookie('__Host-kapi-console=planted; Path=/; Secure'), true);
    assert.equal(setsConsoleCookie(' __HOST-kapi-console=planted'), true);
    assert.equal(setsConsoleCookie('session=1; Path=/'), false);
    assert.equal(withoutConsoleCookie('x=1'), 'x=1');
  });
});
