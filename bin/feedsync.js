#!/usr/bin/env node
// Runs the TypeScript sources directly through tsx, so a clone works without a build step;
// `npm run build` emits dist/ for images that prefer plain JavaScript.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli.ts');
