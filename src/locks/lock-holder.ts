// Who holds a lock, and whether that holder is certainly gone. A PID alone cannot say: in a
// container the run is PID 1, and PID 1 of another container on the same host (docker --network
// host, Kubernetes hostNetwork: one host name) is another live run; on a busy host a PID is reused
// by another process. So a holder records a unique id, its host, the kernel's boot id, its PID
// namespace and its process start time (Linux /proc; elsewhere what is known). Its PID says
// something only where this process sees the same PIDs: the same running kernel (same boot id) and
// the same PID namespace (same /proc/self/ns/pid inode). There, the holder is gone when its PID is
// dead, belongs to a process started at another time (reused), or is this process's own (and not a
// lock this process holds). Anywhere else it is judged by its heartbeat alone (the file lock's beat,
// the Redis lock's expiry): another boot id proves nothing, since another machine with the same host
// name (and, from a cloned image, the same /etc/machine-id) looks exactly like a reboot.
import { randomUUID } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';

export interface LockHolder {
  /** unique per taking of the lock */
  owner: string;
  pid: number;
  host: string;
  /** /proc/sys/kernel/random/boot_id */
  bootId?: string;
  /** /proc/self/ns/pid: PIDs compare only within one namespace */
  pidNs?: string;
  /** /proc/<pid>/stat field 22 (clock ticks after boot) */
  startTime?: string;
  /** what holds it, for a person: "feedsync sync SN-1", a job id */
  what: string;
  at: string;
}

/**
 * Owners this process holds right now, with how many locks each: a lock naming this PID and one of
 * these is alive. Counted: a job holds the locks of every chatbot it writes into under one owner,
 * and releasing one of them must not make the others look abandoned.
 */
const heldHere = new Map<string, number>();

export function holdingHere(owner: string, held: boolean): void {
  const n = (heldHere.get(owner) ?? 0) + (held ? 1 : -1);
  if (n > 0) heldHere.set(owner, n);
  else heldHere.delete(owner);
}

/** A new holder record for this process. */
export function newHolder(what: string): LockHolder {
  const self = selfIdentity();
  return {
    owner: randomUUID(),
    pid: process.pid,
    host: self.host,
    ...optional(self),
    what,
    at: new Date().toISOString(),
  };
}

function optional(self: Identity): Partial<LockHolder> {
  const out: Partial<LockHolder> = {};
  if (self.bootId) out.bootId = self.bootId;
  if (self.pidNs) out.pidNs = self.pidNs;
  if (self.startTime) out.startTime = self.startTime;
  return out;
}

interface Identity {
  host: string;
  bootId?: string;
  pidNs?: string;
  startTime?: string;
}

let cached: Identity | undefined;
function selfIdentity(): Identity {
  cached ??= {
    host: hostname(),
    bootId: readText('/proc/sys/kernel/random/boot_id'),
    pidNs: readLink('/proc/self/ns/pid'),
    startTime: processStartTime(process.pid),
  };
  return cached;
}

/**
 * Why `holder` is certainly gone (a reason for the log), or undefined when it may be alive: it then
 * holds the lock until its heartbeat stops for the caller's bound (or its Redis lock expires).
 */
export function holderGone(
  holder: Pick<LockHolder, 'owner' | 'pid' | 'host' | 'bootId' | 'pidNs' | 'startTime'>,
): string | undefined {
  if (heldHere.has(holder.owner)) return undefined;
  const self = selfIdentity();
  // PIDs compare only under one running kernel and in one PID namespace; nothing else is provably local
  const samePids =
    holder.host === self.host &&
    holder.bootId !== undefined &&
    holder.bootId === self.bootId &&
    holder.pidNs !== undefined &&
    holder.pidNs === self.pidNs;
  if (!samePids) return undefined;
  if (holder.pid === process.pid)
    return `it names PID ${holder.pid} of this PID namespace and boot, this process's own`;
  if (!alive(holder.pid)) return `its process ${holder.pid} is gone`;
  const startTime = processStartTime(holder.pid);
  if (holder.startTime && startTime && startTime !== holder.startTime)
    return `PID ${holder.pid} is now another process`;
  return undefined;
}

/** A holder for a person, in a message: what it is (or `what` when the caller knows better), its process and host, since when. */
export function describeHolder(holder: LockHolder, what = holder.what ? `\`${holder.what}\`` : 'a run'): string {
  return `${what} (PID ${holder.pid} on ${holder.host}${holder.at ? `, since ${holder.at}` : ''})`;
}

/** Parse a holder record (JSON), or undefined when it is not one. */
export function parseHolder(text: string): LockHolder | undefined {
  try {
    return holderOf(JSON.parse(text));
  } catch {
    return undefined; // (not JSON: not a holder record)
  }
}

/** A holder record already parsed from JSON (a record that holds more, job-holders.ts), or undefined when it is not one. */
export function holderOf(v: unknown): LockHolder | undefined {
  if (!v || typeof v !== 'object') return undefined;
  const h = v as Record<string, unknown>;
  if (typeof h.pid !== 'number' || typeof h.owner !== 'string') return undefined;
  const str = (k: string) => (typeof h[k] === 'string' ? (h[k] as string) : undefined);
  return {
    owner: h.owner,
    pid: h.pid,
    host: str('host') ?? hostname(), // a record from before hosts were recorded was written here
    ...(str('bootId') && { bootId: str('bootId') }),
    ...(str('pidNs') && { pidNs: str('pidNs') }),
    ...(str('startTime') && { startTime: str('startTime') }),
    what: str('what') ?? '',
    at: str('at') ?? '',
  };
}

/** Field 22 of /proc/<pid>/stat: when the process started, in clock ticks after boot (Linux). */
export function processStartTime(pid: number): string | undefined {
  const stat = readText(`/proc/${pid}/stat`);
  if (!stat) return undefined;
  // the command name (field 2) is in parentheses and may hold spaces or parentheses itself
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields[19]; // field 22 is the 20th after the name and state
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim() || undefined;
  } catch {
    return undefined; // (no such file (no /proc, a PID gone): the field stays empty)
  }
}

function readLink(path: string): string | undefined {
  try {
    return readlinkSync(path);
  } catch {
    return undefined; // (no such link (no /proc): the field stays empty)
  }
}
