/** One answered request: when it arrived (epoch ms), where, and the status it got. */
export interface LoggedRequest {
  at: number;
  path: string;
  status: string;
}

/** The request log keeps the newest this many (a long-running emulator stays bounded). */
const REQUEST_LOG_SIZE = 100_000;

/**
 * Request counts per path and HTTP status (or "dropped"), for GET /__emulator/stats, and the log of
 * the latest requests with their arrival time, for GET /__emulator/requests (rate checks).
 */
export class RequestStats {
  private readonly counts = new Map<string, Map<string, number>>();
  private log: LoggedRequest[] = [];

  record(path: string, status: string, arrivedAt = Date.now()): void {
    this.log.push({ at: arrivedAt, path, status });
    if (this.log.length > REQUEST_LOG_SIZE * 1.5) this.log = this.log.slice(-REQUEST_LOG_SIZE);
    let byStatus = this.counts.get(path);
    if (!byStatus) this.counts.set(path, (byStatus = new Map()));
    byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
  }

  clear(): void {
    this.counts.clear();
    this.log = [];
  }

  /** the logged requests, oldest first */
  requests(): LoggedRequest[] {
    return this.log.slice(-REQUEST_LOG_SIZE);
  }

  toJSON(): { requests: Record<string, Record<string, number>>; total: number } {
    let total = 0;
    const requests: Record<string, Record<string, number>> = {};
    for (const [path, byStatus] of this.counts) {
      requests[path] = Object.fromEntries(byStatus);
      for (const n of byStatus.values()) total += n;
    }
    return { requests, total };
  }
}
