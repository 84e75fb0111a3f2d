// The smoke report as a table for people (stderr); --json prints the report itself.
import { table } from '../format/table.js';
import type { ChatbotSmokeResult, SmokeReport } from './report.js';

/**
 * What formatSmokeReport reads of a smoke report, and no more: `enqueue --wait` formats a job's return
 * value as far as its schema checked it (cli/job-report.ts), and the compiler holds that schema to
 * every field named here. A SmokeReport is one.
 */
export interface SmokeReportView extends Pick<SmokeReport, 'summary'> {
  chatbots: Array<
    Pick<ChatbotSmokeResult, 'serialNumber' | 'ok' | 'latencyMs' | 'firstFragmentMs' | 'streamMs' | 'checks'>
  >;
}

export function formatSmokeReport(report: SmokeReportView): string {
  const rows = report.chatbots.map((r) => [
    r.serialNumber,
    r.ok ? 'ok' : 'FAILED',
    `${r.latencyMs} ms`,
    r.firstFragmentMs !== undefined ? `${r.firstFragmentMs} ms` : '-',
    r.streamMs !== undefined ? `${r.streamMs} ms` : '-',
    r.ok
      ? `${r.checks.length} checks passed`
      : `${r.checks.filter((c) => !c.ok).length} of ${r.checks.length} checks failed`,
  ]);
  const lines = table(['chatbot', 'result', 'latency', 'first fragment', 'stream', 'detail'], rows);
  for (const r of report.chatbots) {
    for (const c of r.checks) if (!c.ok) lines.push(`  ${r.serialNumber} ${c.name}: ${c.detail}`);
  }
  lines.push(report.summary);
  return lines.join('\n') + '\n';
}
