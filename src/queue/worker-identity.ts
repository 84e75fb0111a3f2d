// Who runs a job: the worker process, by host and PID. BullMQ stores a Worker's `name` on each job
// it takes (`processedBy`, the job hash's `pb`; Bull Board shows it on the job), so the workers are
// named `host:pid`; /status, `feedsync runs` and the run history read it back from there.
import { hostname } from 'node:os';

export interface WorkerIdentity {
  host: string;
  pid: number;
}

/** This process, as the workers it starts are named. */
export function thisWorker(): WorkerIdentity {
  return { host: hostname(), pid: process.pid };
}

/** The BullMQ Worker name of a process: `host:pid`. */
export function workerName(w: WorkerIdentity): string {
  return `${w.host}:${w.pid}`;
}

/** A job's `processedBy` read back (a name of workerName's making); anything else: undefined. */
export function parseWorkerName(name: string | undefined): WorkerIdentity | undefined {
  const m = name ? /^(.+):(\d+)$/.exec(name) : null;
  return m ? { host: m[1]!, pid: Number(m[2]) } : undefined;
}

/** For people: `host pid 1234`. */
export function describeWorker(w: WorkerIdentity): string {
  return `${w.host} pid ${w.pid}`;
}
