// lockChatbots (locks/target-lock.ts), the one way a foreground run and a worker job take the locks
// of several chatbots: serial-number order, all or none for a job, and the owner count that keeps
// a job's other locks alive when one is released. Pure: fake locks, no Redis.
import { describe, expect, it } from 'vitest';
import { lockChatbots, type TargetLock } from '../../src/locks/target-lock.js';
import { holderGone, holdingHere, newHolder } from '../../src/locks/lock-holder.js';

function fakeLocks(busy: ReadonlySet<string>, failing?: string, unreleasable?: string) {
  const taken: string[] = [];
  const released: string[] = [];
  const take = async (chatbot: string): Promise<TargetLock | undefined> => {
    if (chatbot === failing) throw new Error('Redis refused');
    if (busy.has(chatbot)) return undefined;
    taken.push(chatbot);
    return {
      lost: new AbortController().signal,
      release: async () => {
        if (chatbot === unreleasable) throw new Error(`release of ${chatbot} refused`);
        released.push(chatbot);
      },
    };
  };
  return { take, taken, released };
}

describe('lockChatbots', () => {
  it('takes each chatbot once, in serial-number order, whatever the order given', async () => {
    const f = fakeLocks(new Set());
    const { held, refused } = await lockChatbots(['SN-C', 'SN-A', 'SN-B', 'SN-A'], f.take);
    expect(f.taken).toEqual(['SN-A', 'SN-B', 'SN-C']);
    expect(held).toHaveLength(3);
    expect(refused.size).toBe(0);
  });

  it('all or none: at a busy chatbot, the locks taken are released and no later one is taken', async () => {
    const f = fakeLocks(new Set(['SN-B']));
    const { held, refused } = await lockChatbots(['SN-C', 'SN-B', 'SN-A'], f.take, { allOrNone: true });
    expect(f.taken).toEqual(['SN-A']);
    expect(f.released).toEqual(['SN-A']);
    expect(held).toEqual([]);
    expect([...refused.keys()]).toEqual(['SN-B']);
  });

  it('all or none: an error taking one is thrown after the locks taken are released', async () => {
    const f = fakeLocks(new Set(), 'SN-B');
    await expect(lockChatbots(['SN-A', 'SN-B', 'SN-C'], f.take, { allOrNone: true })).rejects.toThrow('Redis refused');
    expect(f.released).toEqual(['SN-A']);
  });

  it('all or none: a release refused is thrown once the other locks are released, with an error taking one if any', async () => {
    const f = fakeLocks(new Set(['SN-C']), undefined, 'SN-A');
    await expect(lockChatbots(['SN-A', 'SN-B', 'SN-C'], f.take, { allOrNone: true })).rejects.toThrow(
      'release of SN-A refused',
    );
    expect(f.released).toEqual(['SN-B']);
    const g = fakeLocks(new Set(), 'SN-C', 'SN-A');
    const both = await lockChatbots(['SN-A', 'SN-B', 'SN-C'], g.take, { allOrNone: true }).catch((e: unknown) => e);
    expect(both).toBeInstanceOf(AggregateError);
    expect((both as AggregateError).errors.map((e: Error) => e.message)).toEqual([
      'Redis refused',
      'release of SN-A refused',
    ]);
    expect(g.released).toEqual(['SN-B']);
  });

  it('else a busy chatbot is skipped and the others are still taken (a foreground run goes on without it)', async () => {
    const f = fakeLocks(new Set(['SN-B']), 'SN-C');
    const { held, refused } = await lockChatbots(['SN-A', 'SN-B', 'SN-C', 'SN-D'], f.take);
    expect(f.taken).toEqual(['SN-A', 'SN-D']);
    expect(held).toHaveLength(2);
    expect(refused.get('SN-B')).toEqual({});
    expect(refused.get('SN-C')?.error).toBeInstanceOf(Error);
  });
});

describe('an owner holding several locks in this process', () => {
  it('stays alive until its last lock is released', () => {
    const holder = { ...newHolder('job 7'), owner: 'test-owner-several' };
    holdingHere(holder.owner, true);
    holdingHere(holder.owner, true);
    holdingHere(holder.owner, false);
    expect(holderGone(holder)).toBeUndefined();
    holdingHere(holder.owner, false);
    expect(holderGone(holder)).toMatch(/this process's own/);
  });
});
