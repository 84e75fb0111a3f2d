// ioredis's Cluster with a connect() that settles once the cluster is ready (or has ended), whichever
// of ioredis's attempts got it there.
//
// ioredis 5.11 (built/cluster/index.js, connect()): an attempt drops its own 'close' listener once
// CLUSTER SLOTS answered ('refresh'), then runs the ready check (CLUSTER INFO). When that says
// `cluster_state:fail` (a node that holds slots is down or has just restarted) the attempt calls
// disconnect(true) to retry, and each retry is a new attempt whose promise nobody holds: the first
// attempt's promise never settles, though the cluster becomes ready a moment later. BullMQ awaits
// that promise when it re-establishes a worker's blocking connection (RedisConnection.reconnect(),
// from RedisQueueBackend.waitForJob once the BZPOPMIN it gave up on was abandoned), so the worker
// took no job until feedsync's watchdog replaced it (src/queue/workers.ts: 60-90 s at the tests'
// 60 s, 300-330 s by default). ioredis's author proposed this rule (settle on 'ready' or 'end', not
// on a 'close' that a reconnection follows) in ioredis pull request 647.
import { Cluster, type ClusterNode, type ClusterOptions } from 'ioredis';

export class SettledCluster extends Cluster {
  private readonly startup: ClusterNode[];

  constructor(startupNodes: ClusterNode[], options: ClusterOptions = {}) {
    super(startupNodes, options);
    this.startup = startupNodes;
  }

  /** resolves when the cluster is ready, rejects when it has ended or the attempt is refused (already connecting) */
  override connect(): Promise<void> {
    const attempt = super.connect();
    return new Promise<void>((resolve, reject) => {
      const done = () => {
        this.off('ready', onReady);
        this.off('end', onEnd);
      };
      const onReady = () => {
        done();
        resolve();
      };
      const onEnd = () => {
        done();
        reject(new Error('Connection is closed.'));
      };
      this.once('ready', onReady);
      this.once('end', onEnd);
      attempt.then(onReady, (err: unknown) => {
        done();
        reject(err instanceof Error ? err : new Error(String(err)));
      });
    });
  }

  /** a copy of this kind (ioredis's duplicate() makes a plain Cluster): BullMQ duplicates a worker's connection for its blocking one */
  override duplicate(overrideStartupNodes: ClusterNode[] = [], overrideOptions: ClusterOptions = {}): SettledCluster {
    return new SettledCluster(overrideStartupNodes.length > 0 ? overrideStartupNodes : [...this.startup], {
      ...this.options,
      ...overrideOptions,
    });
  }
}
