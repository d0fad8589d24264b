// A tiny history router: every page is /det/<route>; links call navigate() instead of reloading.
import { useEffect, useState } from 'react';

export const BASE = '/det';

export function navigate(to: string, replace = false): void {
  const url = to.startsWith(BASE) ? to : BASE + to;
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  window.dispatchEvent(new PopStateEvent('popstate'));
}

// The current route below /det (path and query), updated on navigation.
export function useLocation(): { path: string; query: URLSearchParams } {
  const read = () => ({
    path: location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) || '/' : '/',
    query: new URLSearchParams(location.search),
  });
  const [loc, setLoc] = useState(read);
  useEffect(() => {
    const on = () => setLoc(read());
    window.addEventListener('popstate', on);
    return () => window.removeEventListener('popstate', on);
  }, []);
  return loc;
}

// Matches "/experiments/:id" against a path; the named segments on success.
export function match(pattern: string, path: string): Record<string, string> | null {
  const p = pattern.split('/').filter(Boolean);
  const s = path.split('/').filter(Boolean);
  if (p.length !== s.length) return null;
  const out: Record<string, string> = {};
  for (let i = 0; i < p.length; i++) {
    if (p[i].startsWith(':')) out[p[i].slice(1)] = decodeURIComponent(s[i]);
    else if (p[i] !== s[i]) return null;
  }
  return out;
}
