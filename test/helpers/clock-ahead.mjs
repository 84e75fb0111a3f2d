// Preloaded into a child process (node --import) to run its wall clock ahead by
// FEEDSYNC_TEST_CLOCK_AHEAD_MS, as a host whose clock runs ahead would: Date.now() and new Date()
// answer later times; the monotonic clock (performance.now, hrtime) is untouched, as it is on
// such a host. Only tests start processes with it (test/locks/holders.processes.test.ts).
const ahead = Number(process.env.FEEDSYNC_TEST_CLOCK_AHEAD_MS ?? 0);
const RealDate = Date;
class AheadDate extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(RealDate.now() + ahead);
    else super(...args);
  }
  static now() {
    return RealDate.now() + ahead;
  }
}
globalThis.Date = AheadDate;
