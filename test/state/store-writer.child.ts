// A process writing the state store, for store-processes.test.ts: `commits FILE N` commits forever,
// each commit one generation (every key of `a` set to it, `odd` filled or emptied, `gen` set to it)
// and prints the generation once it is committed; `count FILE ROUNDS NAME` adds one to a counter
// ROUNDS times by compare-and-swap and records each round under its own key, then prints "done";
// `read FILE` reads every entry of every namespace and prints each namespace with its count.
import { createFileStore } from '../../src/state/file-store.js';

const [mode, path, n, name] = process.argv.slice(2);
const store = await createFileStore(path!);

if (mode === 'commits') {
  const keys = Number(n);
  let gen = Number((await store.get('gen', 'gen')) ?? 0);
  for (;;) {
    gen++;
    const value = String(gen);
    const odd = Array.from({ length: 1000 }, (_, i) => `odd-${i}`);
    await store.apply([
      {
        ns: 'a',
        set: (function* () {
          for (let i = 0; i < keys; i++) yield [`key-${i}`, value] as const;
        })(),
      },
      gen % 2 === 1 ? { ns: 'odd', set: odd.map((k) => [k, value] as const) } : { ns: 'odd', delete: odd },
      { ns: 'gen', set: [['gen', value]] },
    ]);
    process.stdout.write(`${gen}\n`);
  }
} else if (mode === 'read') {
  for (const [ns] of store.namespaces()) {
    let count = 0;
    for (const [, value] of store.entries(ns)) count += value.length >= 0 ? 1 : 0;
    process.stdout.write(`${ns} ${count}\n`);
  }
  await store.close();
} else {
  for (let round = 0; round < Number(n); round++) {
    for (;;) {
      const now = await store.get('count', 'n');
      if (await store.swap('count', 'n', now, String(Number(now ?? 0) + 1))) break;
    }
    await store.set('rounds', [[`${name}-${round}`, '1']]);
  }
  await store.close();
  process.stdout.write('done\n');
}
