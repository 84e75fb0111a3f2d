// The bench's reference for a first sync (sync.bench.ts): the least a client can do to create a
// feed's listings, as a new process. Plain JavaScript, no dependency: node:http (bare-post.mjs), `concurrency`
// creates in flight, each answer's body parsed with JSON.parse and its Success checked. No reading or
// mapping of the feed (the bodies are read from a file made before the clock starts: the listings
// feedsync's mapping made of the same feed), no checks, no retries, no state: the floor of what the
// emulator and this machine allow at that concurrency. The request is the one src/api/schemas.ts
// gives (RealEstateCreate: POST of a listing; the session key in the ChatRobot-SessionKey header).
//
//   node test/bench/bare-writer.mjs URL SESSION_KEY BODIES_JSONL CONCURRENCY
//     prints {"listings","cpuMs","writingMs"}
// (cpuMs: the process's CPU since it started, its start and the file's read included; writingMs: from
// its first request to its last answer, what a process already running would take to send them)
import { readFileSync } from 'node:fs';
import { barePost } from './bare-post.mjs';

const [url, sessionKey, bodiesFile, concurrencyArg] = process.argv.slice(2);
const concurrency = Number(concurrencyArg);
const bodies = readFileSync(bodiesFile, 'utf8').split('\n').filter(Boolean);
const post = barePost(url, concurrency);
const headers = { 'content-type': 'application/json', accept: 'application/json', 'chatrobot-sessionkey': sessionKey };

async function create(body) {
  const res = await post('/chat/Chatbot/RealEstateCreate', headers, body);
  const answer = JSON.parse(res.text);
  if (!answer.Success) throw new Error(`create: ${res.status} ${answer.Code} ${answer.Message}`);
}

let next = 0;
async function sender() {
  while (next < bodies.length) await create(bodies[next++]);
}

const t0 = performance.now();
await Promise.all(Array.from({ length: concurrency }, sender));
const writingMs = Math.round(performance.now() - t0);
const cpu = process.cpuUsage();
process.stdout.write(
  JSON.stringify({ listings: bodies.length, cpuMs: Math.round((cpu.user + cpu.system) / 1000), writingMs }) + '\n',
);
