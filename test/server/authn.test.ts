import assert from 'node:assert/strict';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import { adminUserInfo, ensureAdminToken, parseTokenFile, TokenAuthenticator } from '../../src/server/authn.js';
import type { UserInfo } from '../../src/api/authentication.js';
import { tempDir } from './tls-helper.js';

describe('parseTokenFile', () => {
  it('reads 3 and 4 column records, quoted groups, comments and blank lines', () => {
    const tokens = parseTokenFile(
      [
        '# token,user,uid,groups',
        'tok-a,alice,uid-a',
        '',
        '   ',
        'tok-b,bob,uid-b,"dev,ops"',
        'tok-c,carol,uid-c,single',
        'tok-d,dave,uid-d,"a, b,,c",ignored,columns',
        '"tok,e","eve ""the"" admin",uid-e,"system:masters"',
        'tok-f,frank,,',
      ].join('\n'),
    );
    assert.deepEqual(Object.fromEntries(tokens), {
      'tok-a': { name: 'alice', uid: 'uid-a', groups: [] },
      'tok-b': { name: 'bob', uid: 'uid-b', groups: ['dev', 'ops'] },
      'tok-c': { name: 'carol', uid: 'uid-c', groups: ['single'] },
      'tok-d': { name: 'dave', uid: 'uid-d', groups: ['a', 'b', 'c'] },
      'tok,e': { name: 'eve "the" admin', uid: 'uid-e', groups: ['system:masters'] },
      'tok-f': { name: 'frank', uid: '', groups: [] },
    });
  });

  it('accepts CRLF line ends, a byte order mark, a final line without newline, and an empty file', () => {
    const tokens = parseTokenFile('\uFEFFtok-a,alice,uid-a,"g1,g2"\r\n#c\r\ntok-b,bob,uid-b');
    assert.deepEqual(tokens.get('tok-a'), { name: 'alice', uid: 'uid-a', groups: ['g1', 'g2'] });
    assert.deepEqual(tokens.get('tok-b'), { name: 'bob', uid: 'uid-b', groups: [] });
    assert.equal(tokens.size, 2);
    assert.equal(parseTokenFile('').size, 0);
    assert.equal(parseTokenFile('\n# only a comment\n\n').size, 0);
  });

  it('lets a quoted field span lines, as Go csv does', () => {
    const tokens = parseTokenFile('tok-a,alice,uid-a,"g1,\ng2"\ntok-b,bob,uid-b\n');
    assert.deepEqual(tokens.get('tok-a')?.groups, ['g1', 'g2']);
    assert.ok(tokens.has('tok-b'));
  });

  it('keeps # inside a record and leading spaces in fields, as upstream does', () => {
    const tokens = parseTokenFile('tok#1, alice,uid-a');
    assert.deepEqual(tokens.get('tok#1'), { name: ' alice', uid: 'uid-a', groups: [] });
  });

  it('names the line of a record with too few columns', () => {
    assert.throws(
      () => parseTokenFile('tok-a,alice,uid-a\n\n# comment\ntok-b,bob\n'),
      { message: 'token file: line 4: must have at least 3 columns (token, user name, user uid), found 2' },
    );
    assert.throws(() => parseTokenFile('justatoken'), /line 1: must have at least 3 columns .*found 1$/);
    assert.throws(
      () => parseTokenFile('a,b\n', { source: '/etc/kapi/tokens.csv' }),
      { message: "token file '/etc/kapi/tokens.csv': line 1: must have at least 3 columns (token, user name, user uid), found 2" },
    );
  });

  it('reports quoting errors with Go csv texts, lines and columns', () => {
    assert.throws(() => parseTokenFile('tok-a,alice,uid-a\ntok"b,bob,uid-b'), {
      message: 'token file: parse error on line 2, column 4: bare " in non-quoted-field',
    });
    assert.throws(() => parseTokenFile('tok-a,alice,uid-a,"g1"x'), {
      message: 'token file: parse error on line 1, column 23: extraneous or missing " in quoted-field',
    });
    assert.throws(() => parseTokenFile('tok-a,alice,uid-a,"g1,\ng2\n'), {
      message: 'token file: record on line 1; parse error on line 3, column 1: extraneous or missing " in quoted-field',
    });
  });

  it('skips empty tokens and lets a duplicate replace the earlier one, with warnings', () => {
    const warnings: string[] = [];
    const tokens = parseTokenFile(',nobody,uid-0\ntok,first,uid-1\ntok,second,uid-2\n', {
      source: 'tokens.csv',
      onWarning: (m) => warnings.push(m),
    });
    assert.deepEqual([...tokens.keys()], ['tok']);
    assert.equal(tokens.get('tok')?.name, 'second');
    assert.deepEqual(warnings, [
      "empty token has been found in token file 'tokens.csv', line 1; skipped",
      "duplicate token has been found in token file 'tokens.csv', line 3; it replaces the earlier one",
    ]);
    // Without a listener the same file parses silently.
    assert.equal(parseTokenFile(',nobody,uid-0\ntok,a,1\ntok,b,2').size, 1);
  });
});

describe('TokenAuthenticator', () => {
  const tokens = parseTokenFile('secret-token,alice,uid-a,"dev,ops"\nother,bob,uid-b\nauthed,carol,uid-c,system:authenticated\n');
  const authn = new TokenAuthenticator(tokens);

  it('authenticates a bearer token, with any case of the scheme, adding system:authenticated', () => {
    const alice: UserInfo = { name: 'alice', uid: 'uid-a', groups: ['dev', 'ops', 'system:authenticated'] };
    for (const header of ['Bearer secret-token', 'bearer secret-token', 'BEARER secret-token', '  Bearer secret-token  ']) {
      assert.deepEqual(authn.authenticate(header), alice, header);
    }
    assert.deepEqual(authn.authenticate('Bearer other'), { name: 'bob', uid: 'uid-b', groups: ['system:authenticated'] });
    assert.deepEqual(authn.authenticate('Bearer authed')?.groups, ['system:authenticated'], 'not added twice');
  });

  it('matches the token exactly', () => {
    for (const header of [
      undefined,
      '',
      'Bearer',
      'Bearer ',
      'Bearer  secret-token', // upstream splits on single spaces: the token is empty
      'Bearer\tsecret-token',
      'Basic secret-token',
      'secret-token',
      'Bearer Secret-Token',
      'Bearer secret-toke',
      'Bearer secret-token2',
      'Bearer unknown',
    ]) {
      assert.equal(authn.authenticate(header), undefined, JSON.stringify(header));
    }
    // Like upstream, words after the token are ignored.
    assert.equal(authn.authenticate('Bearer secret-token trailing')?.name, 'alice');
  });

  it('returns copies: callers cannot change the stored users', () => {
    const user = authn.authenticate('Bearer other');
    user?.groups.push('system:masters');
    assert.deepEqual(authn.authenticate('Bearer other')?.groups, ['system:authenticated']);
    tokens.set('late', { name: 'late', uid: 'x', groups: [] });
    assert.equal(authn.authenticate('Bearer late'), undefined, 'the constructor copied the map');
  });
});

describe('ensureAdminToken', () => {
  const cleanups: (() => void)[] = [];
  afterEach(() => {
    for (const c of cleanups.splice(0)) c();
  });
  const dataDir = () => {
    const t = tempDir('kapi-authn-');
    cleanups.push(t.cleanup);
    return t.dir;
  };

  it('creates a random base64url token readable only by the owner, and reuses it', async () => {
    const dir = join(dataDir(), 'not-yet-created');
    const token = await ensureAdminToken(dir);
    assert.match(token, /^[A-Za-z0-9_-]{43}$/);
    const path = join(dir, 'admin.token');
    assert.equal(readFileSync(path, 'utf8').trim(), token);
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.equal(await ensureAdminToken(dir), token);
    assert.notEqual(await ensureAdminToken(dataDir()), token);
  });

  it('replaces an empty token file and rejects a token that cannot be sent', async () => {
    const dir = dataDir();
    writeFileSync(join(dir, 'admin.token'), '\n');
    assert.match(await ensureAdminToken(dir), /^[A-Za-z0-9_-]{43}$/);
    writeFileSync(join(dir, 'admin.token'), 'two words\n');
    await assert.rejects(ensureAdminToken(dir), /admin\.token: the token must be printable ASCII/);
    writeFileSync(join(dir, 'admin.token'), 'hand-made.token\n');
    assert.equal(await ensureAdminToken(dir), 'hand-made.token');
  });

  it('authenticates as kapi-admin in system:masters', async () => {
    const token = await ensureAdminToken(dataDir());
    const authn = new TokenAuthenticator(new Map([[token, adminUserInfo()]]));
    assert.deepEqual(authn.authenticate(`Bearer ${token}`), {
      name: 'kapi-admin',
      uid: 'kapi-admin',
      groups: ['system:masters', 'system:authenticated'],
    });
  });
});
