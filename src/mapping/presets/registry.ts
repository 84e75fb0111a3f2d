import type { PresetName } from '../config-schema.js';
import type { Preset } from './define.js';
import { hotpadsPreset } from './hotpads.js';
import { listhubPreset } from './listhub.js';
import { mitsPreset } from './mits.js';
import { resoPreset } from './reso.js';
import { zillowPreset } from './zillow.js';

export type { Preset } from './define.js';
export const PRESETS: Record<PresetName, Preset> = {
  reso: resoPreset,
  zillow: zillowPreset,
  listhub: listhubPreset,
  mits: mitsPreset,
  hotpads: hotpadsPreset,
};
