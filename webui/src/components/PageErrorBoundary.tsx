// Catches an exception thrown while a page renders (an answer of an unexpected shape, a bug) and
// shows it as a message instead of a blank page; a new route (`resetKey`) tries again.
import { Component, type ReactNode } from 'react';

interface State {
  error: Error | null;
  key: string;
}

export class PageErrorBoundary extends Component<{ resetKey: string; children: ReactNode }, State> {
  state: State = { error: null, key: this.props.resetKey };

  static getDerivedStateFromError(error: Error): Partial<State> {
    return { error };
  }

  static getDerivedStateFromProps(props: { resetKey: string }, state: State): Partial<State> | null {
    return props.resetKey !== state.key ? { error: null, key: props.resetKey } : null;
  }

  render() {
    if (!this.state.error) return this.props.children;
    return (
      <div className="page">
        <h1>This page could not be shown</h1>
        <div className="error" role="alert" data-testid="page-error">
          {this.state.error.message || String(this.state.error)}
        </div>
        <p>
          <button onClick={() => this.setState({ error: null })}>Try again</button>
        </p>
      </div>
    );
  }
}
