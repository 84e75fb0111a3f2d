// The settings report as a table for people (stderr); --json prints the report itself.
import type { SettingsReport } from './report.js';
import { formatSettingsIssue } from './settings-schema.js';
import { table } from '../format/table.js';

export function formatSettingsReport(report: SettingsReport): string {
  const rows = report.chatbots.map((r) => [r.serialNumber, r.status, String(r.fields.length), detailOf(r)]);
  const lines = table(['chatbot', 'status', 'fields', 'detail'], rows);
  for (const r of report.chatbots) {
    for (const issue of r.issues ?? []) lines.push(`  ${formatSettingsIssue(issue)}`);
    if (r.body)
      lines.push(
        `  ${r.serialNumber} Edit body${r.status === 'unchanged' ? ' (skipped: unchanged)' : ''}: ${JSON.stringify(r.body)}`,
      );
  }
  if (report.chatbots.length === 0) lines.push('no chatbot with settings to push');
  lines.push(report.summary);
  return lines.join('\n') + '\n';
}

function detailOf(r: SettingsReport['chatbots'][number]): string {
  if (r.error) return r.error.message;
  if (r.issues) return `${r.issues.length} problem(s), nothing sent`;
  return r.fields.join(', ');
}
