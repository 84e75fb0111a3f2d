// Send one chatbot its smoke message, plain and streamed. A failed check fails the job (no retry:
// the smoke is there to notice a flaky service, not to hide it).
import { z } from 'zod';
import type { JobDefinition } from '../src/queue/index.js';
import { runSmoke, type SmokeReport } from '../src/smoke/index.js';

export const MessageSmokePayload = z.strictObject({
  chatbot: z.string().min(1),
});
export type MessageSmokePayload = z.infer<typeof MessageSmokePayload>;

export const messageSmoke: JobDefinition<MessageSmokePayload, SmokeReport> = {
  name: 'message-smoke',
  kind: 'smoke',
  payload: MessageSmokePayload,
  target: (p) => ({ chatbot: p.chatbot }),
  process: (p, ctx) =>
    runSmoke(
      ctx.config.config.chatbots,
      { api: ctx.runtime.api, logger: ctx.logger, signal: ctx.signal },
      { only: [p.chatbot] },
    ),
};
