// Keeps the emulator's state in a JSON file between runs (the embedded emulator of `api.baseUrl:
// embedded` keeps its listings from one CLI run to the next). Writes are debounced and atomic
// (write a temp file, then rename), so a crash never leaves half a file.
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import { ChatbotSettings, ListingCreate } from '../api/schemas.js';
import { ConfigError } from '../errors.js';
import type { EmulatorState } from './state.js';

// a stored listing is one a create or an update accepted (an update's Key and KeyType stay with it) and its ID;
// a file checked for less would hand the emulator listings it cannot index or list
const StoredListing = ListingCreate.extend({ ID: z.number().int() }).loose();

const SavedStateSchema = z.object({
  nextId: z.number().int().positive(),
  nextMessageId: z.number().int().positive(),
  nextSessionId: z.number().int().positive(),
  listings: z.record(z.string(), z.array(StoredListing)),
  settings: z.record(z.string(), ChatbotSettings),
  sessions: z.record(z.string(), z.string()),
  monthly: z.record(z.string(), z.object({ month: z.string(), count: z.number().int() })),
});

export async function loadState(file: string, state: EmulatorState): Promise<void> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(
      `emulator data file ${file} is not JSON (${(err as Error).message}); move it away to start empty`,
      file,
    );
  }
  const parsed = SavedStateSchema.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
    throw new ConfigError(
      `emulator data file ${file} is not an emulator state; move it away to start empty`,
      file,
      issues,
    );
  }
  state.load(parsed.data);
}

export interface Saver {
  /** note a change: saved shortly after */
  changed(): void;
  /** save now if anything changed */
  flush(): Promise<void>;
}

export function createSaver(
  file: string | undefined,
  state: EmulatorState,
  onError: (err: unknown) => void,
  delayMs = 50,
): Saver {
  if (!file) return { changed: () => undefined, flush: async () => undefined };
  let dirty = false;
  let timer: NodeJS.Timeout | undefined;
  let writing: Promise<void> = Promise.resolve();
  const save = async () => {
    if (!dirty) return;
    dirty = false;
    const tmp = `${file}.${process.pid}.tmp`;
    await mkdir(dirname(file), { recursive: true });
    await writeFile(tmp, JSON.stringify(state.toJSON()));
    await rename(tmp, file);
  };
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    writing = writing.then(save, save);
    return writing;
  };
  return {
    changed() {
      dirty = true;
      timer ??= setTimeout(() => void flush().catch(onError), delayMs);
    },
    flush,
  };
}
