// HTML text for the status pages: every value escaped, and masked of secrets before it is shown.
import { redactSecrets } from '../../log.js';

export function escapeHtml(text: string): string {
  return redactSecrets(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function page(title: string, body: string, opts: { refreshSeconds?: number } = {}): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${opts.refreshSeconds ? `<meta http-equiv="refresh" content="${opts.refreshSeconds}">` : ''}
<title>${escapeHtml(title)}</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5rem; color: #222; }
h1 { font-size: 1.4rem; } h2 { font-size: 1.1rem; margin-top: 2rem; }
table { border-collapse: collapse; margin: .5rem 0; }
th, td { text-align: left; padding: .3rem .6rem; border-bottom: 1px solid #ddd; vertical-align: top; }
th { background: #f4f4f4; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
.outcome { font-weight: 600; padding: 0 .3rem; border-radius: 3px; }
.outcome.ok { background: #e8f5e9; color: #1b5e20; } .outcome.guard, .outcome.cancelled, .outcome.taken-over, .outcome.handed-back { background: #fff3e0; color: #e65100; }
.outcome.partial, .outcome.rejected, .outcome.unavailable, .outcome.aborted, .outcome.error { background: #ffebee; color: #b71c1c; }
.stale { background: #ffebee; color: #b71c1c; font-weight: 600; }
.fresh { color: #1b5e20; }
.state { font-weight: 600; } .state.paused { color: #e65100; } .state.running { color: #1565c0; }
.alert { color: #b71c1c; }
.legend span { display: inline-block; margin-right: 1rem; } .legend i { display: inline-block; width: .8rem; height: .8rem; margin-right: .3rem; vertical-align: middle; }
.axis { font-size: 10px; fill: #666; }
code { background: #f4f4f4; padding: 0 .2rem; }
ul.changes { font-family: ui-monospace, monospace; list-style: none; padding-left: 0; }
</style></head>
<body>
${body}
</body></html>
`;
}
