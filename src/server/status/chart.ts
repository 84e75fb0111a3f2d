// A per-feed chart drawn on the server as SVG (no JavaScript, no chart library): one stacked bar per
// run for created / updated / deleted / rejected, and the run's duration as a line on its own scale.
// Each bar carries a <title>, so a browser shows the figures on hover.
import { escapeHtml } from './html.js';

export interface ChartRun {
  label: string;
  created: number;
  updated: number;
  deleted: number;
  rejected: number;
  durationMs: number;
  outcome: string;
}

export const SERIES = [
  { key: 'created', color: '#2e7d32' },
  { key: 'updated', color: '#1565c0' },
  { key: 'deleted', color: '#c62828' },
  { key: 'rejected', color: '#ef6c00' },
] as const;

const W = 640;
const H = 180;
const PAD = { left: 44, right: 56, top: 16, bottom: 24 };

export function runChart(runs: readonly ChartRun[], title: string): string {
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const maxCount = Math.max(1, ...runs.map((r) => r.created + r.updated + r.deleted + r.rejected));
  const maxMs = Math.max(1, ...runs.map((r) => r.durationMs));
  const slot = plotW / Math.max(1, runs.length);
  const barW = Math.max(2, Math.min(28, slot * 0.7));
  const y = (n: number) => PAD.top + plotH - (n / maxCount) * plotH;
  const yMs = (ms: number) => PAD.top + plotH - (ms / maxMs) * plotH;
  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${escapeHtml(title)}" class="chart">`,
  );
  parts.push(`<title>${escapeHtml(title)}</title>`);
  // axes and scale labels: counts on the left, duration on the right
  parts.push(
    `<line x1="${PAD.left}" y1="${PAD.top + plotH}" x2="${W - PAD.right}" y2="${PAD.top + plotH}" stroke="#999"/>`,
  );
  parts.push(`<text x="${PAD.left - 6}" y="${PAD.top + 8}" text-anchor="end" class="axis">${maxCount}</text>`);
  parts.push(`<text x="${PAD.left - 6}" y="${PAD.top + plotH}" text-anchor="end" class="axis">0</text>`);
  parts.push(`<text x="${W - PAD.right + 6}" y="${PAD.top + 8}" class="axis">${formatMs(maxMs)}</text>`);
  if (!runs.length) parts.push(`<text x="${W / 2}" y="${H / 2}" text-anchor="middle" class="axis">no runs yet</text>`);
  runs.forEach((r, i) => {
    const x = PAD.left + i * slot + (slot - barW) / 2;
    let base = 0;
    for (const s of SERIES) {
      const n = r[s.key];
      if (n <= 0) continue;
      const top = y(base + n);
      parts.push(
        `<rect class="bar ${s.key}" data-run="${escapeHtml(r.label)}" x="${x.toFixed(1)}" y="${top.toFixed(1)}" width="${barW.toFixed(1)}" height="${(y(base) - top).toFixed(1)}" fill="${s.color}"><title>${escapeHtml(`${r.label}: ${n} ${s.key}`)}</title></rect>`,
      );
      base += n;
    }
  });
  if (runs.length) {
    const points = runs
      .map((r, i) => `${(PAD.left + i * slot + slot / 2).toFixed(1)},${yMs(r.durationMs).toFixed(1)}`)
      .join(' ');
    parts.push(`<polyline class="duration" points="${points}" fill="none" stroke="#6a1b9a" stroke-width="2"/>`);
    runs.forEach((r, i) =>
      parts.push(
        `<circle cx="${(PAD.left + i * slot + slot / 2).toFixed(1)}" cy="${yMs(r.durationMs).toFixed(1)}" r="3" fill="#6a1b9a"><title>${escapeHtml(`${r.label}: ${formatMs(r.durationMs)} (${r.outcome})`)}</title></circle>`,
      ),
    );
  }
  parts.push('</svg>');
  return parts.join('');
}

export function formatMs(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${(ms / 60_000).toFixed(1)} min`;
}
