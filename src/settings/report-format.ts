// The settings report as a table for people (stderr); --json prints the report itself.
import type { ChatbotSettingsResult, ReportedError } from './report.js';
import { formatSettingsIssue } from './settings-schema.js';
import { table } from '../format/table.js';

/**
 * What formatSettingsReport reads of a settings report, and no more: `enqueue --wait` formats a job's
 * return value as far as its schema checked it (cli/job-report.ts), and the compiler holds that
 * schema to every field named here. A SettingsReport is one.
 */
export interface SettingsReportView {
  chatbots: Array<
    Pick<ChatbotSettingsResult, 'serialNumber' | 'fields' | 'issues'> & {
      /** a SettingsStatus, as it was said */
      status: string;
      error?: Pick<ReportedError, 'message'>;
      /** printed as JSON, whatever it holds */
      body?: unknown;
    }
  >;
  summary: string;
}

export function formatSettingsReport(report: SettingsReportView): string {
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

function detailOf(r: SettingsReportView['chatbots'][number]): string {
  if (r.error) return r.error.message;
  if (r.issues) return `${r.issues.length} problem(s), nothing sent`;
  return r.fields.join(', ');
}
