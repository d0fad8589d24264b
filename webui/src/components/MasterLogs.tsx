// The master's own log, followed live (GET /api/v1/master/logs?follow=true, NDJSON of
// {"logEntry": {id, timestamp, level, message}}), filtered by level and text in the page.
import { useEffect, useRef, useState } from 'react';
import { errorText, streamNdjson } from '../api';
import { ErrorBanner } from './common';

const MAX_LINES = 5000;

export function MasterLogs() {
  const [lines, setLines] = useState<any[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [text, setText] = useState('');
  const [level, setLevel] = useState('');
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const ctrl = new AbortController();
    let buffer: any[] = [];
    let timer: number | undefined;
    const flush = () => {
      timer = undefined;
      const add = buffer;
      buffer = [];
      setLines((old) => old.concat(add).slice(-MAX_LINES));
    };
    streamNdjson(
      'master/logs?follow=true',
      (r) => {
        buffer.push(r.logEntry ?? r);
        if (timer === undefined) timer = window.setTimeout(flush, 200);
      },
      ctrl.signal,
    ).catch((e) => {
      if (!ctrl.signal.aborted) setError(`master logs: ${errorText(e)}`);
    });
    return () => {
      ctrl.abort();
      window.clearTimeout(timer);
    };
  }, []);
  useEffect(() => {
    if (box.current) box.current.scrollTop = box.current.scrollHeight;
  }, [lines]);
  const levels = Array.from(new Set(lines.map((l) => l.level).filter(Boolean))).sort();
  const needle = text.toLowerCase();
  const shown = lines.filter((l) => (!level || l.level === level) && (!needle || String(l.message).toLowerCase().includes(needle)));
  return (
    <section>
      <div className="toolbar">
        <input placeholder="Filter text…" aria-label="master log text filter" value={text} onChange={(e) => setText(e.target.value)} />
        <select aria-label="master log level" value={level} onChange={(e) => setLevel(e.target.value)}>
          <option value="">All levels</option>
          {levels.map((l) => (
            <option key={l}>{l}</option>
          ))}
        </select>
        <span className="muted">
          {shown.length} of {lines.length} lines
        </span>
      </div>
      <ErrorBanner error={error} />
      <div className="logs" ref={box} data-testid="master-logs">
        {shown.map((l, i) => (
          <div key={l.id ?? i} className={`log-line level-${String(l.level || '').toLowerCase()}`}>
            <span className="ts">{l.timestamp ? new Date(l.timestamp).toLocaleTimeString() : ''}</span>
            <span className="rank">{l.level}</span>
            <span className="msg">{String(l.message ?? '')}</span>
          </div>
        ))}
      </div>
    </section>
  );
}
