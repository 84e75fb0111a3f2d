// The status page and a run's page, rendered on the server (readable with JavaScript off): every
// feed's last run, next run, freshness and state, a chart of its last runs, links to each run's
// changes. The pages refresh themselves every minute.
import { earlierAttemptNote, type RunChanges } from '../../change-log/change-log.js';
import { describeChange, displayCountsLine } from '../../sync/index.js';
import { formatUndoReport, type UndoReport } from '../../undo/report.js';
import { formatMs, runChart, SERIES } from './chart.js';
import { escapeHtml as h, page } from './html.js';
import type { FeedStatus } from './status-data.js';

export const STATUS_PATH = '/status';
const runPath = (runId: string) => `${STATUS_PATH}/runs/${encodeURIComponent(runId)}`;

export function renderStatus(status: { at: string; staleHours: number; feeds: FeedStatus[] }): string {
  const rows = status.feeds.map((f) => {
    const l = f.last;
    const photos =
      l?.counts.photosDownloaded === undefined
        ? ''
        : `<br><small class="photos">photos ${l.counts.photosDownloaded} downloaded / ${l.counts.photosReused ?? 0} reused / ${l.counts.photosFailed ?? 0} failed</small>`;
    // what the feed's display rules did in that run (docs/display-rules.md)
    const shown = l ? displayCountsLine(l.counts) : '';
    const display = shown ? `<br><small class="display">display rules: ${h(shown)}</small>` : '';
    const counts = l
      ? `${l.counts.created ?? 0} / ${l.counts.updated ?? 0} / ${l.counts.deleted ?? 0} / ${l.counts.rejected ?? 0}${photos}${display}`
      : '';
    const fresh =
      f.ageMs === undefined
        ? f.runs.length
          ? '<span class="stale">never synced successfully</span>'
          : 'no runs yet'
        : `<span class="${f.stale ? 'stale' : 'fresh'}">${h(ago(f.ageMs))} ago</span>`;
    return `<tr id="feed-${h(f.lane)}" data-feed="${h(f.feed)}">
<td><a href="#chart-${h(f.lane)}">${h(f.feed)}</a><br><small>${h(f.chatbot)}</small></td>
<td>${l ? `<span class="outcome ${h(l.outcome)}">${h(l.outcome)}</span> <a href="${runPath(l.runId)}">${h(when(l.finishedAt))}</a>` : '—'}</td>
<td class="num">${counts}</td>
<td class="num">${l ? h(formatMs(l.durationMs)) : ''}</td>
<td class="freshness">${fresh}</td>
<td>${f.next ? h(when(f.next)) : f.schedule ? h(f.schedule) : '<small>not scheduled</small>'}</td>
<td>${stateCell(f)}</td>
<td>${f.alerts.map((a) => `<div class="alert" title="since ${h(a.since)}">${h(a.condition)}: ${h(a.message)}</div>`).join('')}</td>
</tr>`;
  });
  const legend = `<p class="legend">${SERIES.map((s) => `<span><i style="background:${s.color}"></i>${s.key}</span>`).join('')}<span><i style="background:#6a1b9a;height:2px"></i>duration</span></p>`;
  const sections = status.feeds.map((f) => {
    const chronological = [...f.runs].reverse();
    const chart = runChart(
      chronological.map((r) => ({
        label: `${when(r.finishedAt)} ${r.runId}`,
        created: r.counts.created ?? 0,
        updated: r.counts.updated ?? 0,
        deleted: r.counts.deleted ?? 0,
        rejected: r.counts.rejected ?? 0,
        durationMs: r.durationMs,
        outcome: r.outcome,
      })),
      `${f.feed}: changes and duration of the last ${f.runs.length} runs`,
    );
    const runs = f.runs
      .map(
        (r) =>
          `<tr><td><a href="${runPath(r.runId)}">${h(when(r.finishedAt))}</a></td><td><span class="outcome ${h(r.outcome)}">${h(r.outcome)}</span></td><td>${h(r.summary)}</td>${r.chat ? `<td>answerable ${r.chat.answerable}/${r.chat.asked}</td>` : '<td></td>'}</tr>`,
      )
      .join('');
    return `<section id="chart-${h(f.lane)}"><h2>${h(f.feed)} → ${h(f.chatbot)}</h2>${chart}
<table class="runs"><tr><th>finished (UTC)</th><th>outcome</th><th>summary</th><th>chat check</th></tr>${runs || '<tr><td colspan="4">no runs recorded</td></tr>'}</table></section>`;
  });
  return page(
    'feedsync status',
    `<h1>feedsync status</h1>
<p>${status.feeds.length} feed(s) at ${h(when(status.at))} UTC. A feed is <span class="stale">stale</span> after ${status.staleHours} h without a successful sync (<code>alerts.rules.staleHours</code>). Queue UI: <a href="/ui">/ui</a>, metrics: <a href="/metrics">/metrics</a>.</p>
<table class="feeds"><tr><th>feed</th><th>last run</th><th class="num">created / updated / deleted / rejected</th><th class="num">duration</th><th>last good sync</th><th>next run</th><th>state</th><th>open alerts</th></tr>
${rows.join('\n')}</table>
${legend}
${sections.join('\n')}`,
    { refreshSeconds: 60 },
  );
}

/** The commands that undo a run from a shell (what the page shows without a login). */
export function undoCommands(runId: string, configFile = 'feedsync.yaml'): string[] {
  return [`feedsync undo ${runId} --dry-run --config ${configFile}`, `feedsync undo ${runId} --config ${configFile}`];
}

/** The run page's "undo this run": a link to the plan (with a login), else the commands. */
function undoSection(runId: string, undo: { canAct: boolean; command: string[] }): string {
  if (undo.canAct)
    return `<h2>undo this run</h2><p><a class="undo" href="${runPath(runId)}/undo">undo this run…</a> (shows what it would do first)</p>`;
  return `<h2>undo this run</h2><p>No login is configured for this page (<code>FEEDSYNC_UI_TOKEN</code>, or <code>FEEDSYNC_UI_USER</code> and <code>FEEDSYNC_UI_PASSWORD</code>), so it offers no actions. From a shell:</p>
<pre class="undo-command">${undo.command.map(h).join('\n')}</pre>`;
}

/** The undo's dry-run plan, and the form that queues it. */
export function renderUndoPlan(plan: UndoReport): string {
  const runId = plan.undoOf;
  const nothing = plan.counts.deleted + plan.counts.updated + plan.counts.created === 0 && plan.counts.conflicts === 0;
  return page(
    `feedsync undo ${runId}`,
    `<p><a href="${runPath(runId)}">← run ${h(runId)}</a></p>
<h1>undo run ${h(runId)}</h1>
<p>What the undo would do now (a dry run; nothing has been written):</p>
<pre class="undo-plan">${h(formatUndoReport(plan))}</pre>
${
  nothing
    ? '<p>Nothing to undo.</p>'
    : `<form method="post" action="${runPath(runId)}/undo">
<input type="hidden" name="confirm" value="${h(runId)}">
${plan.counts.conflicts || plan.counts.cannot ? `<p><label><input type="checkbox" name="force"> --force: revert the conflicts too${plan.counts.cannot ? ', and undo the rest of a run the change log did not keep whole' : ''}</label></p>` : ''}
<p><button type="submit">undo run ${h(runId)}</button> (queued as a job: it takes the chatbot's lock like a sync)</p>
</form>`
}`,
  );
}

export function renderUndoQueued(runId: string, jobId: string, force: boolean): string {
  return page(
    `feedsync undo ${runId} queued`,
    `<p><a href="/status">← status</a></p>
<h1>undo of run ${h(runId)} queued</h1>
<p class="undo-queued">job <code>${h(jobId)}</code>${force ? ' (--force)' : ''} on queue listing-undo: its run appears on the status page when it ends; the queue UI shows it meanwhile (<a href="/ui">/ui</a>).</p>`,
  );
}

export function renderRun(
  runId: string,
  found: RunChanges,
  limit: number,
  undo?: { canAct: boolean; command: string[] },
): string {
  const { run, changes, total } = found;
  const earlier = earlierAttemptNote(found);
  const head = run
    ? `<h1>run ${h(run.runId)}</h1>
<p>${run.dryRun ? 'dry run of ' : ''}<a href="/status#chart-${h(run.feed)}">${h(run.feed)}</a> → ${h(run.chatbot)}: <span class="outcome ${h(run.outcome)}">${h(run.outcome)}</span>, ${h(when(run.startedAt))} UTC, ${h(formatMs(run.durationMs))}${run.jobId ? `, job ${h(run.jobId)}` : ''}</p>
<p>${h(run.summary)}</p>${earlier ? `<p>${h(earlier)}</p>` : ''}${run.message ? `<p>${h(run.message)}</p>` : ''}${run.chat ? `<p>chat check: answerable ${run.chat.answerable}/${run.chat.asked}${run.chat.missing.length ? ` — not answered: ${h(run.chat.missing.join(', '))}` : ''}</p>` : ''}`
    : `<h1>run ${h(runId)}</h1>`;
  const more =
    total > changes.length
      ? `<p>… ${total - changes.length} more: <code>feedsync runs show ${h(runId)} --json</code></p>`
      : '';
  return page(
    `feedsync run ${runId}`,
    `<p><a href="/status">← status</a></p>${head}
<h2>changes (${total}${run?.dropped ? `, and ${run.dropped} not kept` : ''})</h2>
<ul class="changes">${changes.map((e) => `<li class="${e.change.op}">${h(describeChange(e.change, e.dryRun))}</li>`).join('')}</ul>${more}
<p><small>showing at most ${limit}; <code>feedsync runs show ${h(runId)}</code> prints the same.</small></p>${undo ? undoSection(runId, undo) : ''}`,
  );
}

function when(iso: string): string {
  return iso.replace('T', ' ').slice(0, 19);
}

function ago(ms: number): string {
  const m = Math.floor(ms / 60_000);
  if (m < 1) return `${Math.max(0, Math.round(ms / 1000))} s`;
  if (m < 120) return `${m} min`;
  const hrs = ms / 3_600_000;
  return hrs < 48 ? `${hrs.toFixed(1)} h` : `${(hrs / 24).toFixed(1)} days`;
}

/** A row's state: paused, idle, or running (how far, then on which worker: the state and its progress read as one). */
function stateCell(f: FeedStatus): string {
  const on = f.worker ? ` <small class="worker">on ${h(f.worker)}</small>` : '';
  const progress = f.progress ? ` <span class="progress">${h(f.progress)}</span>` : '';
  return `<span class="state ${f.state}">${f.state}</span>${progress}${on}`;
}
