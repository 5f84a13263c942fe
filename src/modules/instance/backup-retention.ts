/**
 * Which scheduled backups to keep: the newest overall, plus the newest of each of the `daily` most
 * recent UTC days that have a backup, of each of the `weekly` most recent ISO weeks, and of each of
 * the `monthly` most recent calendar months (grandfather-father-son, as restic's --keep-*).
 */
export function backupsToKeep<T extends { id: string; createdAt: Date }>(
  newestFirst: T[],
  keep: { daily: number; weekly: number; monthly: number },
): Set<string> {
  const kept = new Set<string>();
  if (newestFirst.length) kept.add(newestFirst[0].id);
  const bucket = (count: number, key: (d: Date) => string) => {
    const seen = new Set<string>();
    for (const b of newestFirst) {
      if (seen.size >= count) break;
      const k = key(b.createdAt);
      if (seen.has(k)) continue;
      seen.add(k);
      kept.add(b.id);
    }
  };
  bucket(keep.daily, (d) => d.toISOString().slice(0, 10));
  bucket(keep.weekly, isoWeek);
  bucket(keep.monthly, (d) => d.toISOString().slice(0, 7));
  return kept;
}

function isoWeek(d: Date): string {
  const t = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
  const day = t.getUTCDay() || 7;
  t.setUTCDate(t.getUTCDate() + 4 - day);
  const yearStart = new Date(Date.UTC(t.getUTCFullYear(), 0, 1));
  const week = Math.ceil(((t.getTime() - yearStart.getTime()) / 86_400_000 + 1) / 7);
  return `${t.getUTCFullYear()}-W${week}`;
}
