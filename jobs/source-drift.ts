// A live RESO feed's dictionary check (src/drift/): its mapping against the source's $metadata and
// Lookup resource, the server read at most once a day, and the `source-drift` alert raised naming
// each finding (cleared when a check finds none). Reads no listing record, writes nothing to a
// chatbot. A server that cannot be read fails the job (retried as the queue retries).
import { z } from 'zod';
import { alertDrift } from '../src/alerts/index.js';
import { chatbotsOf } from '../src/config/feed-chatbots.js';
import { checkDrift, type DriftReport } from '../src/drift/drift-check.js';
import { ConfigError } from '../src/errors.js';
import type { JobDefinition, RunReport } from '../src/queue/index.js';

export const SourceDriftPayload = z.strictObject({ feed: z.string().min(1) });
export type SourceDriftPayload = z.infer<typeof SourceDriftPayload>;

export interface SourceDriftReport extends RunReport, Pick<DriftReport, 'findings' | 'read' | 'readAt' | 'requests'> {}

export const sourceDrift: JobDefinition<SourceDriftPayload, SourceDriftReport> = {
  name: 'source-drift',
  kind: 'drift',
  payload: SourceDriftPayload,
  target: (p) => ({ feed: p.feed }),
  async process(p, ctx) {
    const { config, dir } = ctx.config;
    const feed = config.feeds.find((f) => f.name === p.feed);
    if (!feed) throw new ConfigError(`no feed ${p.feed} in the config: nothing to check`, ctx.config.file);
    const deps = {
      store: ctx.runtime.store,
      ctx: { baseDir: dir, logger: ctx.logger, signal: ctx.signal, budgets: ctx.runtime.budgets },
      siblings: config.feeds,
    };
    const report = await checkDrift(feed, deps);
    await alertDrift(
      ctx.runtime.store,
      config.alerts,
      { feed: feed.name, chatbot: chatbotsOf(feed).join(', ') },
      report.findings.map((f) => f.message),
      ctx.logger,
    );
    const how = report.read ? `read the server (${report.requests} requests)` : `compared the read of ${report.readAt}`;
    return {
      outcome: report.findings.length ? 'drift' : 'ok',
      summary: `drift check ${feed.name}: ${report.findings.length ? `${report.findings.length} finding(s)` : 'no drift'}; ${how}`,
      findings: report.findings,
      read: report.read,
      readAt: report.readAt,
      requests: report.requests,
    };
  },
};
