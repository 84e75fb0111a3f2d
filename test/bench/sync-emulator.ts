// The emulator for the sync benchmark, in a process of its own so its 100k stored listings do not
// count in the sync's RSS. Sends its URL to the parent over IPC; exits when the parent goes.
// It also counts the writes (creates and updates) each listing got since the parent last asked to
// start counting ({writesFrom: true}; none before it asks), for the fleet bench's kill tick: {writes: true} is answered
// with each chatbot's writes and how many were sent for a listing already written (WriteCount).
import http from 'node:http';
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

/** the chatbot the emulator's warm-up writes to, before any measure (warmUp) */
const WARM_UP = 'SN-BENCH-WARM-UP';
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

await warmUp(emulator.url);
process.send?.({ url: emulator.url });

/**
 * Serves creates and list pages of a chatbot of its own, then forgets them (POST /__emulator/reset),
 * before the parent measures anything: a cold emulator spends ~0.4 s more CPU on its first 5,000
 * creates than on the next 5,000 (its code not yet optimized, its young generation not yet grown;
 * 10 ms latency, load 5-6), which the first sync, the first thing it serves, paid and the bare
 * writer after it did not.
 */
async function warmUp(url: string): Promise<void> {
  const latencyMs = Number(process.argv[2] ?? 20);
  emulator.configure({ latencyMs: 1 }); // (not 0: the wait before each answer is warmed too)
  // (node:http with a keep-alive agent, as the bare clients: fetch would spend more of this process's CPU on the client side)
  const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
  const post = (path: string, body: unknown) =>
    new Promise<void>((resolve, reject) => {
      const headers = { 'content-type': 'application/json', 'chatrobot-sessionkey': 'bench-session' };
      const req = http.request(url + path, { method: 'POST', agent, headers }, (res) => {
        res.resume();
        res.on('end', () =>
          res.statusCode === 200 ? resolve() : reject(new Error(`warm-up: ${path} answered ${res.statusCode}`)),
        );
      });
      req.on('error', reject);
      req.end(JSON.stringify(body));
    });
  const CREATES = 3000;
  const PAGES = CREATES / 100;
  let next = 0;
  const sender = async () => {
    for (let i = next++; i < CREATES + PAGES; i = next++)
      if (i < CREATES) await post('/chat/Chatbot/RealEstateCreate', warmUpListing(i));
      else
        await post('/chat/Chatbot/RealEstateList', {
          SerialNumber: WARM_UP,
          PageNumber: i - CREATES + 1,
          PageSize: 100,
        });
  };
  await Promise.all(Array.from({ length: 16 }, sender));
  await post('/__emulator/reset', {});
  agent.destroy();
  emulator.configure({ latencyMs });
}

function warmUpListing(i: number) {
  return {
    SerialNumber: WARM_UP,
    SaleType: i % 7 ? 'for_sale' : 'for_rent',
    Status: 'Active',
    CurrencySymbol: '$',
    PropertyType: 'Single Family',
    Bedrooms: 1 + (i % 5),
    Bathrooms: 1.5,
    Url: `https://broker.test/warm-up/${i}`,
    MLSNumber: `WARM${i}`,
    YearBuilt: 1950 + (i % 70),
    DaysOnMarket: i % 90,
    LotArea: 6000,
    BuildingArea: 1200 + i,
    AreaUnit: 'Square Feet',
    Images: [`https://photos.broker.test/warm-up/${i}/1.jpg`],
    ParkingSpots: 2,
    Description: `${1 + (i % 5)} bed home with a yard, listing ${i}.`,
    ExtensionColumn: [{ Key: 'SourceStatus', value: 'Active' }],
    Address: `${i} Oak St`,
    City: 'Austin',
    State: 'TX',
    ZIP: '78701',
    Latitude: 30.2,
    Longitude: -97.7,
    SalePrice: 450000 + i,
    RentPrice: 2000 + i,
  };
}
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
