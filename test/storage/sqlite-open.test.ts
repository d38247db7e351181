/** Opening the embedded store: clear errors for data it must not touch. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import Database from 'better-sqlite3';
import { openStorage, StorageFormatError, StorageUnavailableError } from '../../src/storage/index.js';

const dir = mkdtempSync(join(tmpdir(), 'kapi-sqlite-open-'));
after(() => rmSync(dir, { recursive: true, force: true }));

it('refuses a store written in a newer format, leaving it untouched', () => {
  const path = join(dir, 'newer.db');
  const db = new Database(path);
  db.exec('CREATE TABLE log (x)');
  db.pragma('user_version = 99');
  db.close();
  assert.throws(() => openStorage({ kind: 'sqlite', path }), (e: Error) => {
    assert.ok(e instanceof StorageFormatError);
    assert.match(e.message, /newer kapi \(storage format 99; this kapi reads up to 1\)/);
    return true;
  });
  const again = new Database(path);
  assert.equal(again.pragma('user_version', { simple: true }), 99);
  again.close();
});

it('refuses a file that is not a database', () => {
  const path = join(dir, 'garbage.db');
  writeFileSync(path, 'this is not sqlite '.repeat(500));
  assert.throws(() => openStorage({ kind: 'sqlite', path }), (e: Error) => {
    assert.ok(e instanceof StorageFormatError, String(e));
    assert.match(e.message, /not a usable kapi store/);
    return true;
  });
});

it('refuses a SQLite database that is not a kapi store', () => {
  const path = join(dir, 'other.db');
  const db = new Database(path);
  db.exec('CREATE TABLE users (name TEXT)');
  db.close();
  assert.throws(() => openStorage({ kind: 'sqlite', path }), /is a SQLite database, but not a kapi store/);
});

it('refuses a second opener of the same store while the first holds it', async () => {
  const path = join(dir, 'locked.db');
  const first = openStorage({ kind: 'sqlite', path });
  await first.create('/k', 'v');
  assert.throws(() => openStorage({ kind: 'sqlite', path }), (e: Error) => {
    assert.ok(e instanceof StorageUnavailableError, String(e));
    assert.match(e.message, /in use by another process/);
    return true;
  });
  assert.equal((await first.get('/k'))?.value, 'v', 'the first opener keeps working');
  await first.close();
  const second = openStorage({ kind: 'sqlite', path });
  assert.equal((await second.get('/k'))?.value, 'v');
  await second.close();
});
