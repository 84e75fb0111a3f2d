// Push one chatbot's settings from config. Invalid settings fail the job without retry; a transient
// API failure is retried; unchanged settings are skipped unless forced.
import { z } from 'zod';
import type { JobDefinition } from '../src/queue/index.js';
import { pushSettings, type SettingsReport } from '../src/settings/index.js';

export const SettingsPushPayload = z.strictObject({
  chatbot: z.string().min(1),
  dryRun: z.boolean().optional(),
  force: z.boolean().optional(),
});
export type SettingsPushPayload = z.infer<typeof SettingsPushPayload>;

export const settingsPush: JobDefinition<SettingsPushPayload, SettingsReport> = {
  name: 'settings-push',
  kind: 'settings',
  payload: SettingsPushPayload,
  exclusive: true,
  target: (p) => ({ chatbot: p.chatbot }),
  process: (p, ctx) =>
    pushSettings(
      ctx.config.config.chatbots,
      { api: ctx.runtime.api, store: ctx.runtime.store, logger: ctx.logger, signal: ctx.signal },
      { dryRun: p.dryRun, force: p.force, only: [p.chatbot] },
    ),
};
