// The emulator's own paths under /__emulator/: what tests need and nothing else (docs/contracts.md, "The emulator"). They are
// plain JSON (no envelope), need no key, and never get injected faults.
import { z } from 'zod';
import type { EmulatorState } from './state.js';
import type { RequestStats } from './stats.js';

export interface AdminContext {
  state: EmulatorState;
  stats: RequestStats;
  chatbots: string[] | undefined;
  createSession(serialNumber: string, sessionID?: number): number;
  changed(): void;
}

export interface AdminReply {
  status: number;
  body: unknown;
}

const HideRequest = z.strictObject({
  serialNumber: z.string().min(1),
  /** MLS numbers or URLs; [] shows every listing again */
  keys: z.array(z.string().min(1)).max(10_000),
});

const SessionRequest = z.strictObject({
  serialNumber: z.string().min(1),
  sessionID: z.number().int().positive().optional(),
});

export function handleAdmin(ctx: AdminContext, method: string, url: URL, body: unknown): AdminReply {
  const route = `${method} ${url.pathname}`;
  switch (route) {
    case 'GET /__emulator/listings': {
      const serialNumber = url.searchParams.get('serialNumber');
      if (!serialNumber) return { status: 400, body: { error: 'query parameter serialNumber is required' } };
      const listings = [...(ctx.state.listings.get(serialNumber)?.values() ?? [])].sort((a, b) => a.ID - b.ID);
      return { status: 200, body: { serialNumber, listings } };
    }
    case 'GET /__emulator/stats':
      return { status: 200, body: ctx.stats.toJSON() };
    case 'GET /__emulator/requests':
      return { status: 200, body: { requests: ctx.stats.requests() } };
    case 'POST /__emulator/reset':
      ctx.state.clear();
      ctx.stats.clear();
      ctx.changed();
      return { status: 200, body: { ok: true } };
    case 'POST /__emulator/hide': {
      // the chatbot "forgets" these listings in its answers (they stay listed): what the chat check must catch
      const parsed = HideRequest.safeParse(body);
      if (!parsed.success)
        return {
          status: 400,
          body: {
            error: `expected {serialNumber, keys: [MLS number or URL, ...]}: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`).join('; ')}`,
          },
        };
      const { serialNumber, keys } = parsed.data;
      if (keys.length) ctx.state.hidden.set(serialNumber, new Set(keys));
      else ctx.state.hidden.delete(serialNumber);
      return { status: 200, body: { serialNumber, hidden: keys } };
    }
    case 'POST /__emulator/sessions': {
      const parsed = SessionRequest.safeParse(body);
      if (!parsed.success) {
        const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`);
        return { status: 400, body: { error: `expected {serialNumber, sessionID?}: ${issues.join('; ')}` } };
      }
      const { serialNumber, sessionID } = parsed.data;
      if (ctx.chatbots && !ctx.chatbots.includes(serialNumber)) {
        return { status: 404, body: { error: `chatbot ${serialNumber} not found` } };
      }
      return { status: 200, body: { sessionID: ctx.createSession(serialNumber, sessionID) } };
    }
    default:
      return { status: 404, body: { error: `no emulator path ${route}` } };
  }
}
