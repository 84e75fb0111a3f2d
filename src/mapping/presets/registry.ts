import type { PresetName } from '../config-schema.js';
import { definePreset, type Preset, type PresetSpec } from './define.js';
import { hotpadsPreset } from './hotpads.js';
import { listhubPreset } from './listhub.js';
import { mitsPreset } from './mits.js';
import { resoPreset } from './reso.js';
import { zillowPreset } from './zillow.js';

export type { Preset } from './define.js';

const SPECS: Record<PresetName, PresetSpec> = {
  reso: resoPreset,
  zillow: zillowPreset,
  listhub: listhubPreset,
  mits: mitsPreset,
  hotpads: hotpadsPreset,
};

const defined = new Map<PresetName, Preset>();

/** A preset, parsed when first asked for: a start whose feeds name no preset parses none. */
export function presetNamed(name: PresetName): Preset {
  let preset = defined.get(name);
  if (!preset) {
    preset = definePreset(SPECS[name]);
    defined.set(name, preset);
  }
  return preset;
}

/** Whether `name` is a preset's name. */
export function isPresetName(name: string): name is PresetName {
  return Object.hasOwn(SPECS, name);
}
