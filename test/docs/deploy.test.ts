// README's "Deploy" says what an operator will find on the worker's port: the queue UI's queues are
// the worker's, counted in words as README counts them.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { QUEUE_NAMES } from '../../src/queue/names.js';

const root = join(import.meta.dirname, '../..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const WORDS = ['none', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'];

describe("README's deploy part", () => {
  it('counts the queues Bull Board shows as the worker runs them', () => {
    const said = /Bull Board: the (\w+) queues/.exec(readme)?.[1];
    expect(said).toBe(WORDS[Object.keys(QUEUE_NAMES).length]);
  });
});
