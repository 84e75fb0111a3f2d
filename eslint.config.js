// `npm run lint`: the layers' import direction (docs/design.md, "The layers and what may import
// what") as no-restricted-imports zones, sync/'s steps never importing its run nor each other (only
// its kernel, sync/model/, and sync/util/), sync/ used from outside through its index.ts only, no
// function over 80 lines, and typescript-eslint's recommended rules where they hold today. No import
// cycle in src/ and jobs/, `import type` counted, is madge's check (`npm run cycles`, part of lint;
// package.json "madge"): eslint's import-x/no-cycle skipped type imports.
// Formatting is prettier's (.prettierrc.json), checked by `npm run format:check` (part of lint once
// the tree has been formatted once).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Folders of src/ from the bottom up; a folder may import its own layer and the ones below. */
const LAYERS = [
  // base: no knowledge of runs, queues or commands
  ['net', 'redis', 'locks', 'listing', 'format', 'api', 'budget', 'feeds', 'mapping', 'media', 'state', 'emulator'],
  // orchestration, and what is made of it: the config (its schema composes the parts'), alerts,
  // the change log (it records the sync's changes) and the queue
  ['config', 'sync', 'settings', 'smoke', 'alerts', 'change-log', 'queue', 'undo', 'drift'],
  // running work as commands and jobs do; the worker's HTTP face
  ['runs', 'server'],
  // entry points
  ['cli'],
];

const above = (i) => LAYERS.slice(i + 1).flat();
/**
 * Folders of one layer that one of them must not import back: the other way round is the one that
 * holds (api takes budgets; queue's jobs name the change log's type; listing is below the readers).
 */
const NOT_BACK = { budget: ['api'], listing: ['api', 'feeds', 'mapping'], 'change-log': ['queue'] };
/** src/runtime.ts builds what a command runs with (the API client, store, change log): the runs layer's, not below it. */
const RUNTIME = ['../runtime.js', '../../runtime.js'];
const forbid = (folders) => [...new Set(folders)].flatMap((f) => [`../${f}/*`, `../../${f}/*`, `../../../${f}/*`]);

/** Outside sync/, a sync is used through src/sync/index.ts, never a file of one of its rooms (tests may). */
const SYNC_FRONT_DOOR = {
  group: [
    './sync/*/**',
    '../sync/*/**',
    '../../sync/*/**',
    '../../../sync/*/**',
    '../src/sync/*/**',
    '../../src/sync/*/**',
  ],
  message: "outside sync/, import a sync's parts from src/sync/index.ts (its front door), not from a room of sync/",
};

const layerRules = LAYERS.flatMap((folders, i) =>
  folders.map((folder) => ({
    files: [`src/${folder}/**/*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                ...forbid([...above(i), ...(NOT_BACK[folder] ?? [])]),
                ...(i < 2 ? RUNTIME : []),
                '../../jobs/*',
                '../../../jobs/*',
              ],
              message: `src/${folder} is below what it imports here: see docs/design.md, "The layers and what may import what"`,
            },
            ...(folder === 'sync' ? [] : [SYNC_FRONT_DOOR]),
          ],
        },
      ],
    },
  })),
);

/**
 * sync/'s step rooms and what they share. A step is called by the run (sync/run/) with what it needs and
 * returns what it decided; it never imports the run nor another step, only the kernel (sync/model/: the
 * types every step shares), sync/util/ and the layers below sync/ (docs/design.md, "Where a change goes").
 */
const STEP_ROOMS = ['plan', 'read', 'remote', 'report', 'settle', 'write'];
const SHARED_ROOMS = ['model', 'util'];
const roomPaths = (rooms) => rooms.flatMap((r) => [`../${r}/*`, `../../${r}/*`]);
/** A room of sync/ not listed above is held to the steps' rule against the run, and forbids every step room. */
const stepRoomRules = [undefined, ...STEP_ROOMS, ...SHARED_ROOMS].map((room) => {
  const others = STEP_ROOMS.filter((r) => r !== room);
  return {
    files: [`src/sync/${room ?? '*'}/**/*.ts`],
    ...(room === undefined && { ignores: ['src/sync/run/**'] }),
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                ...forbid(LAYERS.slice(2).flat()),
                '../run/*',
                '../../run/*',
                '../../jobs/*',
                '../../../jobs/*',
                ...RUNTIME,
                '../../../runtime.js',
              ],
              message:
                'a step of sync/ does not import sync/run/ (nor anything above sync/): the run calls the step with what it needs; see docs/design.md, "Where a change goes"',
            },
            {
              group: roomPaths(others),
              message: `src/sync/${room ?? '<room>'}/ imports no step room of sync/ but its own: what steps share goes in sync/model/ (the kernel), a helper that knows no step in sync/util/, and sync/run/ composes the steps; see docs/design.md, "Where a change goes"`,
            },
          ],
        },
      ],
    },
  };
});

export default tseslint.config(
  { ignores: ['dist/**', 'dist.next-*/**', 'dist.old-*/**', 'node_modules/**', 'coverage/**', '**/*.d.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: 'module',
      globals: { process: 'readonly', console: 'readonly', URL: 'readonly' },
    },
    rules: {
      // functions of at most 80 lines (small functions: see docs/design.md); a longer one fails lint
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true, IIFEs: true }],
      // TypeScript checks these itself (strict), and better
      'no-undef': 'off',
      'no-redeclare': 'off',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      // `for await (const _ of x);` drains an iterator on purpose
      'no-empty': ['error', { allowEmptyCatch: true }],
      // sanitizers match control characters on purpose
      'no-control-regex': 'off',
      // flagged in code that predates the linter; none is left, and `npm run lint` fails on any warning (--max-warnings 0)
      '@typescript-eslint/no-explicit-any': 'warn',
      '@typescript-eslint/no-unused-expressions': 'warn',
      '@typescript-eslint/no-this-alias': 'warn',
      'require-yield': 'warn',
      'no-regex-spaces': 'warn',
      'prefer-const': 'warn',
      'no-useless-escape': 'warn',
    },
  },
  ...layerRules,
  ...stepRoomRules,
  {
    // the entry points beside the layers' folders (src/cli.ts, src/runtime.ts, …) and jobs/
    files: ['src/*.ts', 'jobs/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [SYNC_FRONT_DOOR] }] },
  },
  {
    // node:http's values are read through nodeHttp() (a require), never an ES import: that makes
    // its module namespace, whose lazy WebSocket getters load Node's own undici (src/net/status-text.ts)
    files: ['src/**/*.ts', 'jobs/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: ['node:http', 'http'].map((name) => ({
            name,
            allowTypeImports: true,
            message: "read node:http's values through nodeHttp() from src/net/status-text.ts (it says why)",
          })),
        },
      ],
    },
  },
  {
    // a function of src/ takes at most 20 paths (eslint's cyclomatic complexity): one a reader can hold
    files: ['src/**/*.ts'],
    rules: { complexity: ['error', 20] },
  },
  // (eslint refuses an empty `files`: a list left empty goes with its entry)
  {
    // tests and benchmarks: long describe blocks are the norm
    files: ['test/**/*.ts'],
    rules: { 'max-lines-per-function': 'off' },
  },
);
