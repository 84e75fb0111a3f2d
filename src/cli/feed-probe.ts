// `feedsync feed probe --feed NAME`: what a RESO server accepts (keyset filters, $orderby, $select,
// $expand=Media, the page-size cap, compression, quota headers), from a few small requests within
// the source's budget, and the settings to use, or that the vendor profile's fit.
import { loadConfig } from '../config/load.js';
import { selectFeeds } from '../config/select.js';
import { ConfigError } from '../errors.js';
import { probeLines, probeReso } from '../feeds/reso/reso-probe.js';
import { describeVendor } from '../feeds/vendors/describe.js';
import { createLogger } from '../log.js';
import { printJson } from './exit.js';

export async function run(opts: { config: string; feed: string; json?: boolean }): Promise<number> {
  const loaded = await loadConfig(opts.config);
  const [feed] = selectFeeds(loaded.config.feeds, [opts.feed], loaded.file);
  if (!feed) throw new ConfigError(`no feed to probe in ${loaded.file}`, loaded.file);
  if (feed.source.kind !== 'reso')
    throw new ConfigError(
      `feed ${feed.name} is a ${feed.source.kind} feed: feed probe asks RESO Web API servers`,
      loaded.file,
    );
  const logger = createLogger({ level: process.env.LOG_LEVEL ?? 'warn' });
  const report = await probeReso(feed.source, { baseDir: loaded.dir, logger });
  if (opts.json) {
    printJson({ feed: feed.name, ...report });
    return 0;
  }
  const out = (s = '') => process.stdout.write(`${s}\n`);
  out(`feed ${feed.name}: ${describeVendor(feed.source)}`);
  out();
  for (const line of probeLines(report)) out(line);
  return 0;
}
