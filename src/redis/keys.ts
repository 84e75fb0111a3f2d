// Every Redis key feedsync writes is named here, and nowhere else. One rule makes a Redis Cluster
// work: the keys one operation touches together (a Lua script, a MULTI, an MGET, a BullMQ queue's
// scripts) must hash to one slot, or the cluster refuses the command (CROSSSLOT). feedsync's
// operations cross feeds, chatbots and the deployment (a state commit writes a feed's hashes and
// the deployment's marks hash; a run record goes to its feed's list and the all-runs list; the
// change log appends to several feeds' streams at once), so every key of a deployment carries the
// same hash tag: the prefix in braces, `{feedsync}:...` (BullMQ's documented pattern for queue
// prefixes). One deployment then lives on one shard; deployments with different prefixes spread.
// A single Redis and a Sentinel group have no slots: their keys keep the plain `feedsync:...`
// layout, so an existing deployment finds its queues and state where it left them.

export type Topology = 'single' | 'sentinel' | 'cluster';

/** The root every key starts with: the prefix, hash-tagged on a cluster. It is also BullMQ's prefix. */
export function keyRoot(prefix: string, topology: Topology): string {
  return topology === 'cluster' && !/\{[^}]+\}/.test(prefix) ? `{${prefix}}` : prefix;
}

/** The hash tag a key is placed by (the whole key when it has none), as Redis Cluster reads it. */
export function hashTagOf(key: string): string {
  const open = key.indexOf('{');
  if (open < 0) return key;
  const close = key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : key;
}

/** The line of jobs waiting for a lock: beside the lock, in its slot (one Lua script takes both). */
export function lockWaitersKey(lockKey: string): string {
  return `${lockKey}:waiters`;
}

/** Who holds a lock (host, pid, boot): beside the lock, in its slot (the acquire script writes both). */
export function lockHolderKey(lockKey: string): string {
  return `${lockKey}:holder`;
}

/** The names of every key under one root. */
export function keysOf(root: string) {
  return {
    root,
    /** BullMQ's `prefix` option: its keys are `${root}:${queue}:...` */
    bullPrefix: root,
    /** hash: feed (or `*`) → ISO time it was paused */
    paused: `${root}:paused`,
    /** an operator's cancel request of one job (read together by MGET) */
    cancel: (jobId: string) => `${root}:cancel:${jobId}`,
    /** run history lists (a run goes to its feed's or chatbot's list and the all-runs list in one MULTI) */
    runsAll: `${root}:runs:all`,
    runsOfFeed: (feed: string) => `${root}:runs:feed:${feed}`,
    runsOfChatbot: (serialNumber: string) => `${root}:runs:chatbot:${serialNumber}`,
    /** hash: a running job's lock token → its queue, id and the process running it (queue/job-holders.ts) */
    jobHolders: `${root}:job-holders`,
    /** the lock of one target (its line of waiters beside it: lockWaitersKey) */
    lock: (name: string) => `${root}:lock:${name}`,
    /** the run of a job scheduler that waits behind a busy lock, at most one a scheduler (queue/schedule-wait.ts; one script takes it with the lock and its line) */
    scheduleWaiting: (queue: string, scheduler: string) => `${root}:schedule-waiting:${queue}:${scheduler}`,
    /** who writes the job schedulers (queue/schedule-sync.ts: a start's, and those Redis lost): one worker at a time, for a few seconds */
    schedulesWriter: `${root}:schedules-writer`,
    /** sorted set: the job schedulers a worker's start removed, its config no longer planning them, scored by when (millis); the watch of a worker of an older config does not write them again; a mark lasts a week (queue/schedule-removed.ts) */
    schedulesRemoved: `${root}:schedules-removed`,
    /** one hash per state namespace (a state commit writes several in one MULTI) */
    state: (ns: string) => `${root}:state:${ns}`,
    statePattern: `${root}:state:*`,
    /** a request budget's keys: pause, leases, sliding logs, learned limits, fixed windows (one Lua script takes several) */
    budget: (key: string, part: string) => `${root}:budget:${key}:${part}`,
    /** the change log: a stream per feed, a list and a record per run, lists of runs */
    changesOfFeed: (feed: string) => `${root}:changes:feed:${feed}`,
    changesOfRun: (runId: string) => `${root}:changes:run:${runId}`,
    runInfo: (runId: string) => `${root}:changes:runinfo:${runId}`,
    changeRuns: (feed: string | undefined) => (feed ? `${root}:changes:runs:${feed}` : `${root}:changes:runs`),
    changesPattern: `${root}:changes:*`,
    /** whole listings kept for undo: a hash per run (key → packed listing), and per feed the runs that kept some with their bytes */
    wholeOfRun: (runId: string) => `${root}:changes:whole:${runId}`,
    wholeRuns: (feed: string) => `${root}:changes:wholeruns:${feed}`,
    wholeBytes: (feed: string) => `${root}:changes:wholebytes:${feed}`,
    /** pushed EntityEvents (RCP-028) of a feed: the waiting ones (a hash, one field per resource and key), its generation, those a job took (one hash a feed), and when its last job took them (queue/push-events.ts) */
    pushWaiting: (feed: string) => `${root}:push:${feed}:waiting`,
    pushGeneration: (feed: string) => `${root}:push:${feed}:gen`,
    pushTaken: (feed: string) => `${root}:push:${feed}:taken`,
    pushStarted: (feed: string) => `${root}:push:${feed}:started`,
  };
}
export type Keys = ReturnType<typeof keysOf>;
