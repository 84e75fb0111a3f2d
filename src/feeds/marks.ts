// The mark a feed read shared by several lanes starts from (sync/read/read-feed.ts): the oldest of
// theirs, so a lane that missed changes (its run failed) gets them again; a lane with none, or a
// mark that does not read as the RESO reader's ({ ts }), means a full pull.
export function oldestMark(marks: ReadonlyArray<string | undefined>): string | undefined {
  let oldest: { mark: string; at: number } | undefined;
  for (const mark of marks) {
    const at = mark === undefined ? NaN : markTime(mark);
    if (Number.isNaN(at)) return undefined;
    if (!oldest || at < oldest.at) oldest = { mark: mark!, at };
  }
  return oldest?.mark;
}

function markTime(mark: string): number {
  try {
    const parsed: unknown = JSON.parse(mark);
    const ts = typeof parsed === 'object' && parsed !== null && 'ts' in parsed ? parsed.ts : undefined;
    return typeof ts === 'string' ? Date.parse(ts) : NaN;
  } catch {
    return NaN; // (not JSON: no time, as a mark without one)
  }
}
