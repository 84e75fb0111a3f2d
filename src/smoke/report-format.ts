// The smoke report as a table for people (stderr); --json prints the report itself.
import { table } from '../format/table.js';
import type { SmokeReport } from './report.js';

export function formatSmokeReport(report: SmokeReport): string {
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
