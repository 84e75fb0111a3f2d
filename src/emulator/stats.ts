/** Request counts per path and HTTP status (or "dropped"), for GET /__emulator/stats. */
export class RequestStats {
  private readonly counts = new Map<string, Map<string, number>>();

  record(path: string, status: string): void {
    let byStatus = this.counts.get(path);
    if (!byStatus) this.counts.set(path, (byStatus = new Map()));
    byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
  }

  clear(): void {
    this.counts.clear();
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
