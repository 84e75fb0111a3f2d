// Which lanes a rerun of a job leaves out (settle/lane-done.ts): a lane's commit records its job
// only in a real run of a job that ended ok for the lane, and a later attempt finds only the lanes
// that the same job recorded (a lane done by another job, or recorded by none, is run).
import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../src/state/memory-store.js';
import { commitLanes, type LaneCommitInput } from '../../src/sync/settle/lane-commit.js';
import { doneIn, lanesDoneBy, LANE_DONE_NAMESPACE } from '../../src/sync/settle/lane-done.js';
import type { SyncOutcome } from '../../src/sync/model/outcome.js';

const exec = { created: 2, updated: 1, deleted: 3 };

function input(id: string): LaneCommitInput {
  return {
    id,
    tally: { recordFingerprints: [], recordUnlisted: [], recordStamps: [] },
    exec: { written: [], stamped: [], deletedKeys: [], unlisted: [] },
    guard: { marks: { set: [], clear: [] } },
    missingSince: new Map(),
  } as unknown as LaneCommitInput;
}

async function commit(store: ReturnType<typeof createMemoryStore>, id: string, run: object, outcome: SyncOutcome) {
  await commitLanes(store, [doneIn(run, input(id), outcome, exec)]);
}

describe('lanes done by a job', () => {
  it('a lane that ended ok in a job is found done by that job alone, with what it wrote', async () => {
    const store = createMemoryStore();
    await commit(store, 'f>A', { jobId: 'job-1' }, 'ok');
    await commit(store, 'f>B', { jobId: 'job-1' }, 'ok');
    await commit(store, 'f>C', { jobId: 'job-0' }, 'ok');
    const done = await lanesDoneBy(store, 'job-1', ['f>A', 'f>B', 'f>C', 'f>D']);
    expect([...done.keys()]).toEqual(['f>A', 'f>B']);
    expect(done.get('f>A')).toMatchObject({ job: 'job-1', created: 2, updated: 1, deleted: 3 });
    expect([...(await lanesDoneBy(store, 'job-2', ['f>A', 'f>B', 'f>C'])).keys()]).toEqual([]);
  });

  it('records nothing for a lane that did not end ok, or a run outside a job', async () => {
    const store = createMemoryStore();
    for (const outcome of ['partial', 'guard', 'failed', 'aborted', 'unavailable', 'rejected'] as const)
      await commit(store, `f>${outcome}`, { jobId: 'job-1' }, outcome);
    await commit(store, 'f>cli', {}, 'ok');
    expect((await store.getAll(LANE_DONE_NAMESPACE)).size).toBe(0);
  });

  it('a later job of the lane overwrites the record: one entry per lane', async () => {
    const store = createMemoryStore();
    await commit(store, 'f>A', { jobId: 'job-1' }, 'ok');
    await commit(store, 'f>A', { jobId: 'job-2' }, 'ok');
    expect((await store.getAll(LANE_DONE_NAMESPACE)).size).toBe(1);
    expect([...(await lanesDoneBy(store, 'job-1', ['f>A'])).keys()]).toEqual([]);
    expect([...(await lanesDoneBy(store, 'job-2', ['f>A'])).keys()]).toEqual(['f>A']);
  });
});
