// The experiment's code: the file tree of its model definition and the chosen file's text
// (GET /api/v1/experiments/{id}/file_tree, POST /api/v1/experiments/{id}/file).
import { useState } from 'react';
import { api, errorText } from '../api';
import { fmtBytes } from '../format';
import { usePoll } from '../hooks';
import { ErrorBanner, Loading } from './common';

interface FileNode {
  path: string;
  name: string;
  isDir: boolean;
  contentLength: number;
  contentType: string;
  files?: FileNode[];
}

function decode(b64: string): string {
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  return new TextDecoder().decode(bytes);
}

function Tree(props: { nodes: FileNode[]; chosen: string | null; onChoose: (n: FileNode) => void }) {
  return (
    <ul className="file-tree">
      {props.nodes.map((n) => (
        <li key={n.path}>
          {n.isDir ? (
            <details open>
              <summary>{n.name}/</summary>
              <Tree nodes={n.files ?? []} chosen={props.chosen} onChoose={props.onChoose} />
            </details>
          ) : (
            <button className={`plain file ${props.chosen === n.path ? 'chosen' : ''}`} onClick={() => props.onChoose(n)} data-testid={`file-${n.path}`}>
              {n.name}
            </button>
          )}
        </li>
      ))}
    </ul>
  );
}

export function CodeTree({ experimentId }: { experimentId: number }) {
  const tree = usePoll((signal) => api('GET', `experiments/${experimentId}/file_tree`, undefined, signal), [experimentId], 0);
  const [chosen, setChosen] = useState<FileNode | null>(null);
  const [text, setText] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const choose = async (n: FileNode) => {
    setChosen(n);
    setText(null);
    setError(null);
    if (!n.contentType.startsWith('text/')) return;
    try {
      const r = await api('POST', `experiments/${experimentId}/file`, { path: n.path });
      setText(decode(r.file ?? ''));
    } catch (e) {
      setError(`${n.path}: ${errorText(e)}`);
    }
  };
  if (!tree.data) return tree.error ? <ErrorBanner error={tree.error} /> : <Loading />;
  const files: FileNode[] = tree.data.files ?? [];
  if (!files.length) return <div className="muted">This experiment was submitted without code.</div>;
  return (
    <div className="code-view">
      <div className="code-tree" data-testid="file-tree">
        <Tree nodes={files} chosen={chosen?.path ?? null} onChoose={choose} />
      </div>
      <div className="code-file">
        <ErrorBanner error={error} />
        {chosen ? (
          <>
            <div className="muted small">
              {chosen.path} · {fmtBytes(chosen.contentLength)}
            </div>
            {chosen.contentType.startsWith('text/') ? (
              text === null ? (
                <Loading />
              ) : (
                <pre className="code" data-testid="file-content">
                  {text}
                </pre>
              )
            ) : (
              <div className="muted">Binary file ({chosen.contentType}).</div>
            )}
          </>
        ) : (
          <div className="muted">Choose a file.</div>
        )}
      </div>
    </div>
  );
}
