// A modal dialog: a title, its body and a row of buttons; Escape or the backdrop closes it.
import { useEffect, type ReactNode } from 'react';

export function Dialog(props: { title: string; onClose: () => void; children: ReactNode; footer?: ReactNode; testId?: string }) {
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') props.onClose();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [props.onClose]); // eslint-disable-line react-hooks/exhaustive-deps
  return (
    <div className="backdrop" onMouseDown={(e) => e.target === e.currentTarget && props.onClose()}>
      <div className="dialog" role="dialog" aria-label={props.title} data-testid={props.testId}>
        <div className="dialog-title">
          <h2>{props.title}</h2>
          <button className="plain" aria-label="close" onClick={props.onClose}>
            ×
          </button>
        </div>
        <div className="dialog-body">{props.children}</div>
        {props.footer ? <div className="dialog-footer">{props.footer}</div> : null}
      </div>
    </div>
  );
}
