import assert from 'node:assert/strict';
import { it } from 'node:test';
import { escapeExtraKey } from '../../src/server/proxy.js';
import { unescapeExtraKey } from '../../src/server/request-header.js';

it('writes extra keys into header names a backend reads back, whatever they hold', () => {
  const token = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
  for (const key of ['scopes', 'acme.com/project', '(', 'a:b@c;d=e,f', 'ü', '', 'x y']) {
    const name = `x-remote-extra-${escapeExtraKey(key)}`;
    assert.match(name, token, key);
    // Header names reach the backend lower-cased (HTTP/2 requires it); unescaping takes either case.
    assert.equal(unescapeExtraKey(name.slice('x-remote-extra-'.length).toLowerCase()), key);
  }
});
