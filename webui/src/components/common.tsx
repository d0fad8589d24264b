import type { ReactNode } from 'react';
import { navigate } from '../router';
import { stateName } from '../format';

export function ErrorBanner({ error }: { error: string | null | undefined }) {
  if (!error) return null;
  return (
    <div className="error" role="alert">
      {error}
    </div>
  );
}

export function StateBadge({ state }: { state: string | undefined }) {
  const s = stateName(state);
  return <span className={`badge state-${s.replace(/ /g, '-')}`}>{s || 'unknown'}</span>;
}

export function Link({ to, children, className }: { to: string; children: ReactNode; className?: string }) {
  return (
    <a
      href={`/det${to}`}
      className={className}
      onClick={(e) => {
        if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
        e.preventDefault();
        navigate(to);
      }}
    >
      {children}
    </a>
  );
}

export function Progress({ value }: { value: number | undefined }) {
  const p = Math.max(0, Math.min(1, value ?? 0));
  return (
    <span className="progress" title={`${Math.round(p * 100)}%`}>
      <span className="bar" style={{ width: `${p * 100}%` }} />
      <span className="label">{Math.round(p * 100)}%</span>
    </span>
  );
}

export function Tabs<T extends string>(props: { tabs: T[]; value: T; onChange: (t: T) => void }) {
  return (
    <div className="tabs" role="tablist">
      {props.tabs.map((t) => (
        <button
          key={t}
          role="tab"
          aria-selected={t === props.value}
          className={t === props.value ? 'active' : ''}
          onClick={() => props.onChange(t)}
        >
          {t}
        </button>
      ))}
    </div>
  );
}

export function Loading() {
  return <div className="muted">Loading…</div>;
}
