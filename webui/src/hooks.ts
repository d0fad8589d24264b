import { useCallback, useEffect, useRef, useState } from 'react';
import { errorText } from './api';

// Loads data now and every `intervalMs` while the tab is visible (as Determined polls);
// `reload` fetches at once. A failed load keeps the last data and reports the error.
export function usePoll<T>(
  load: (signal: AbortSignal) => Promise<T>,
  deps: unknown[],
  intervalMs = 5000,
): { data: T | undefined; error: string | null; reload: () => void; loading: boolean } {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  useEffect(() => {
    setData(undefined);
    setLoading(true);
  }, deps); // eslint-disable-line react-hooks/exhaustive-deps
  useEffect(() => {
    const ctrl = new AbortController();
    let timer: number | undefined;
    const run = async () => {
      if (document.hidden) {
        timer = window.setTimeout(run, intervalMs);
        return;
      }
      try {
        const d = await loadRef.current(ctrl.signal);
        if (ctrl.signal.aborted) return;
        setData(d);
        setError(null);
      } catch (e) {
        if (ctrl.signal.aborted) return;
        setError(errorText(e));
      }
      setLoading(false);
      if (intervalMs > 0) timer = window.setTimeout(run, intervalMs);
    };
    run();
    return () => {
      ctrl.abort();
      window.clearTimeout(timer);
    };
  }, [...deps, tick, intervalMs]); // eslint-disable-line react-hooks/exhaustive-deps
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data, error, reload, loading };
}
