import { loadConfig } from '../config/load.js';
import { printJson } from './exit.js';

export async function run(opts: { config: string; json?: boolean }): Promise<number> {
  const { config, file } = await loadConfig(opts.config);
  const summary = {
    file,
    api: { baseUrl: config.api.baseUrl, concurrency: config.api.concurrency, ratePerSecond: config.api.ratePerSecond },
    redis: config.redis ? { url: config.redis.url.replace(/\/\/[^@/]*@/, '//***@') } : null,
    chatbots: config.chatbots.map((c) => ({ serialNumber: c.serialNumber, settings: Object.keys(c.settings ?? {}).length, smoke: Boolean(c.smoke) })),
    feeds: config.feeds.map((f) => ({ name: f.name, chatbot: f.chatbot, kind: f.source.kind, keyBy: f.keyBy, deletes: f.deletes.mode, schedule: f.schedule?.cron ?? null })),
  };
  if (opts.json) printJson({ ok: true, ...summary });
  else {
    process.stderr.write(`config ${file} is valid: ${summary.feeds.length} feed(s), ${summary.chatbots.length} chatbot(s), api ${summary.api.baseUrl}\n`);
    for (const f of summary.feeds) process.stderr.write(`  feed ${f.name} (${f.kind}) → ${f.chatbot}, key ${f.keyBy}, deletes ${f.deletes}${f.schedule ? `, cron ${f.schedule}` : ''}\n`);
  }
  return 0;
}
