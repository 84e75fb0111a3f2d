// The emulator for the sync benchmark, in a process of its own so its 100k stored listings do not
// count in the sync's RSS. Sends its URL to the parent over IPC; exits when the parent goes.
// It also counts the writes (creates and updates) each listing got since the parent last asked to
// start counting ({writesFrom: true}; none before it asks), for the fleet bench's kill tick: {writes: true} is answered
// with each chatbot's writes and how many were sent for a listing already written (WriteCount).
import { startEmulator } from '../../src/emulator/index.js';

/** Writes counted since {writesFrom: true}. */
export interface WriteCount {
  /** writes that arrived, each chatbot's (serial number → writes) */
  bySerial: Record<string, number>;
  /** writes that arrived for a listing written before in the count, each chatbot's */
  repeatedBySerial: Record<string, number>;
  /** writes that arrived for a listing written before in the count: sent again */
  repeated: number;
  /** listings written more than once */
  listingsRepeated: number;
  /** with {writes: true, since, until} (epoch ms): each chatbot's listings first written between them */
  firstBetween: Record<string, number>;
}

const WRITES = new Set(['/chat/Chatbot/RealEstateCreate', '/chat/Chatbot/RealEstateUpdate']);
/** per chatbot and listing: writes, and when the first arrived (epoch ms) */
let written = new Map<string, { n: number; first: number }>();
/**
 * Counting only once asked ({writesFrom: true}): each write's body parsed here is the emulator's CPU,
 * on the cores the sync under measure shares, so the sync bench (which never asks) does not pay it.
 */
let counting = false;

const emulator = await startEmulator({
  port: 0,
  latencyMs: Number(process.argv[2] ?? 20),
  secretKey: 'bench-secret',
  sessionKey: 'bench-session',
  onRequest: ({ path, body }) => {
    if (!counting || !WRITES.has(path)) return;
    const w = JSON.parse(body) as { SerialNumber?: string; Key?: string; MLSNumber?: string; URL?: string };
    const key = `${w.SerialNumber}\t${w.Key ?? w.MLSNumber ?? w.URL}`;
    const w1 = written.get(key);
    if (w1) w1.n++;
    else written.set(key, { n: 1, first: Date.now() });
  },
});

function writeCount(since = Infinity, until = Infinity): WriteCount {
  const out: WriteCount = { bySerial: {}, repeatedBySerial: {}, repeated: 0, listingsRepeated: 0, firstBetween: {} };
  const add = (to: Record<string, number>, serial: string, n: number) => (to[serial] = (to[serial] ?? 0) + n);
  for (const [key, { n, first }] of written) {
    const serial = key.slice(0, key.indexOf('\t'));
    add(out.bySerial, serial, n);
    if (n > 1) add(out.repeatedBySerial, serial, n - 1);
    if (first >= since && first <= until) add(out.firstBetween, serial, 1);
    out.repeated += n - 1;
    if (n > 1) out.listingsRepeated++;
  }
  return out;
}

process.send?.({ url: emulator.url });
// the parent sets the latency of each scenario (a large first sync seeds at a lower one)
// and asks its CPU time around each run (the emulator shares the machine's cores with the sync)
type Message = {
  latencyMs?: number;
  cpu?: boolean;
  writesFrom?: boolean;
  writes?: boolean;
  since?: number;
  until?: number;
};
process.on('message', (m: Message) => {
  if (typeof m.latencyMs === 'number') emulator.configure({ latencyMs: m.latencyMs });
  if (m.cpu) {
    const { user, system } = process.cpuUsage();
    process.send?.({ cpuMs: Math.round((user + system) / 1000) });
  }
  if (m.writesFrom) {
    counting = true;
    written = new Map();
  }
  if (m.writes) process.send?.({ writes: writeCount(m.since, m.until) });
});
process.on('disconnect', () => void emulator.close().then(() => process.exit(0)));
