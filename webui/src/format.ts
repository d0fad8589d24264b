// Display helpers shared by the pages.

export function stateName(s: string | undefined): string {
  return (s || '').replace(/^STATE_/, '').replace(/_/g, ' ').toLowerCase();
}

export function toDate(t: unknown): Date | null {
  if (t === null || t === undefined || t === '') return null;
  const d = new Date(t as string);
  return isNaN(d.getTime()) ? null : d;
}

export function fmtTime(t: unknown): string {
  const d = toDate(t);
  return d ? d.toLocaleString() : '—';
}

export function fmtDuration(start: unknown, end: unknown): string {
  const s = toDate(start);
  if (!s) return '—';
  const e = toDate(end) ?? new Date();
  let sec = Math.max(0, Math.round((e.getTime() - s.getTime()) / 1000));
  const h = Math.floor(sec / 3600);
  sec -= h * 3600;
  const m = Math.floor(sec / 60);
  sec -= m * 60;
  return h ? `${h}h ${m}m` : m ? `${m}m ${sec}s` : `${sec}s`;
}

export function fmtNumber(v: unknown): string {
  if (typeof v !== 'number' || !isFinite(v)) return v === undefined || v === null ? '—' : String(v);
  if (Number.isInteger(v)) return String(v);
  const a = Math.abs(v);
  return a !== 0 && (a < 1e-3 || a >= 1e6) ? v.toExponential(4) : v.toPrecision(6).replace(/\.?0+$/, '');
}

export function fmtBytes(n: number): string {
  if (!n) return '0 B';
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${n.toFixed(i ? 1 : 0)} ${units[i]}`;
}

export function fmtPercent(p: number | undefined): string {
  return typeof p === 'number' ? `${Math.round(p * 100)}%` : '—';
}

export const TERMINAL_STATES = new Set([
  'STATE_COMPLETED',
  'STATE_CANCELED',
  'STATE_ERROR',
  'STATE_DELETED',
]);
