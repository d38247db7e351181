import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseGoURL, validateWebhookService, validateWebhookURL } from '../../../src/apis/apiextensions/webhook-validation.js';
import { texts } from './fixtures.js';

const P = 'spec.conversion.webhookClientConfig.url';
const FORM = '; desired format: https://host[/path]';

describe('validateWebhookURL', () => {
  it('accepts https URLs with a host and path', () => {
    assert.deepEqual(validateWebhookURL(P, 'https://example.com:8443/convert', true), []);
  });

  it('reports scheme, host, user info, fragment and query', () => {
    assert.deepEqual(texts(validateWebhookURL(P, 'http://example.com/x', true)), [`${P}: Invalid value: "http": 'https' is the only allowed URL scheme${FORM}`]);
    assert.deepEqual(texts(validateWebhookURL(P, 'https:///path', true)), [`${P}: Invalid value: "": host must be provided${FORM}`]);
    assert.deepEqual(texts(validateWebhookURL(P, 'https://user:pw@host/x?a=b#frag', true)), [
      `${P}: Invalid value: "user:pw": user information is not permitted in the URL`,
      `${P}: Invalid value: "frag": fragments are not permitted in the URL`,
      `${P}: Invalid value: "a=b": query parameters are not permitted in the URL`,
    ]);
    assert.deepEqual(texts(validateWebhookURL(P, 'example.com', true)), [
      `${P}: Invalid value: "": 'https' is the only allowed URL scheme${FORM}`,
      `${P}: Invalid value: "": host must be provided${FORM}`,
    ]);
  });

  it('reports Go url.Parse errors as Required', () => {
    const cases: [string, string][] = [
      ['https://ho st/', 'invalid character " " in host name'],
      [':foo', 'missing protocol scheme'],
      ['https://host:abc/', 'invalid port ":abc" after host'],
      ['https://h/%zz', 'invalid URL escape "%zz"'],
      ['https://h/\n', 'net/url: invalid control character in URL'],
    ];
    for (const [url, reason] of cases) {
      assert.deepEqual(texts(validateWebhookURL(P, url, true)), [`${P}: Required value: url must be a valid URL: parse ${JSON.stringify(url)}: ${reason}${FORM}`]);
    }
  });
});

describe('parseGoURL', () => {
  it('splits like Go', () => {
    assert.deepEqual(parseGoURL('https://a@b.c:1/p%20q?x=1#f%21'), { scheme: 'https', opaque: '', user: 'a', host: 'b.c:1', path: '/p q', rawQuery: 'x=1', fragment: 'f!' });
    assert.equal(parseGoURL('mailto:x@y').opaque, 'x@y');
    assert.equal(parseGoURL('a:b/c:d').opaque, 'b/c:d');
    assert.throws(() => parseGoURL('1a:b'), { message: 'parse "1a:b": first path segment in URL cannot contain colon' });
  });
});

describe('validateWebhookService', () => {
  const S = 'svc';
  it('accepts a valid reference', () => {
    assert.deepEqual(validateWebhookService(S, 'ns', 'name', '/convert/v1', 443), []);
    assert.deepEqual(validateWebhookService(S, 'ns', 'name', undefined, 1), []);
  });

  it('checks the path segments', () => {
    assert.deepEqual(texts(validateWebhookService(S, 'ns', 'n', '//', 443)), ['svc.path: Invalid value: "//": segment[0] may not be empty']);
    assert.deepEqual(texts(validateWebhookService(S, 'ns', 'n', '/a//b/', 443)), ['svc.path: Invalid value: "/a//b/": segment[1] may not be empty']);
  });
});
