// "Did you mean …?": the known word nearest to a typo, for messages that name the fix.

/** The candidate nearest to `word` (case-insensitive edit distance), if it is near enough to be the one meant. */
export function nearest(
  word: string,
  candidates: Iterable<string>,
  maxDistance = Math.max(2, Math.floor(word.length / 3)),
): string | undefined {
  const lower = word.toLowerCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const d = candidate.toLowerCase() === lower ? 0 : distance(candidate.toLowerCase(), lower);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return bestDistance <= maxDistance ? best : undefined;
}

/** Levenshtein distance, two rows at a time. */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[b.length]!;
}
