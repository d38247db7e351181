import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateName, MAX_GENERATED_NAME_LENGTH, randomString } from '../../src/machinery/names.js';

test('appends five characters from the generator alphabet', () => {
  for (let i = 0; i < 200; i++) assert.match(generateName('web-'), /^web-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
});

test('truncates the base to 58 characters', () => {
  const name = generateName('x'.repeat(100));
  assert.equal(MAX_GENERATED_NAME_LENGTH, 58);
  assert.equal(name.length, 63);
  assert.ok(name.startsWith('x'.repeat(58)));
  assert.equal(generateName('a'.repeat(58)).length, 63);
});

test('uses the given random source', () => {
  assert.equal(generateName('p-', () => 0), 'p-bbbbb');
  assert.equal(generateName('p-', () => 0.9999999), 'p-99999');
  assert.equal(randomString(3, () => 0.5), 'rrr');
});
