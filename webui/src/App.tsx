// The shell: login gate, navigation bar, and the page for the current route.
import { useEffect, useState, type ReactElement } from 'react';
import { api, getToken, setToken, setUnauthorizedHandler } from './api';
import { Link } from './components/common';
import { PageErrorBoundary } from './components/PageErrorBoundary';
import { ClusterPage } from './pages/Cluster';
import { ExperimentDetail } from './pages/ExperimentDetail';
import { ExperimentList } from './pages/ExperimentList';
import { JobQueue } from './pages/JobQueue';
import { Login } from './pages/Login';
import { TrialDetail } from './pages/TrialDetail';
import { match, navigate, useLocation } from './router';

function loginUrl(path: string, search: string): string {
  const back = path === '/' || path.startsWith('/login') ? '' : `?redirect=${encodeURIComponent(path + search)}`;
  return `/login${back}`;
}

export function App() {
  const { path, query } = useLocation();
  const [user, setUser] = useState<string | null>(null);

  useEffect(() => {
    setUnauthorizedHandler(() => {
      setUser(null);
      navigate(loginUrl(location.pathname.replace(/^\/det/, ''), location.search), true);
    });
  }, []);

  // Every page but login needs a token that the master still accepts.
  useEffect(() => {
    if (path.startsWith('/login')) return;
    if (!getToken()) {
      navigate(loginUrl(path, location.search), true);
      return;
    }
    if (user === null) {
      api('GET', 'me')
        .then((r) => setUser(r.user?.username ?? ''))
        .catch(() => undefined); // a 401 already went back to login
    }
  }, [path, user]);

  if (path === '/' || path === '') {
    navigate('/experiments', true);
    return null;
  }
  if (path.startsWith('/login')) {
    return <Login redirect={query.get('redirect')} onLogin={(u) => setUser(u)} />;
  }
  if (!getToken()) return null;

  let page: ReactElement;
  let m: Record<string, string> | null;
  if ((m = match('/experiments/:id/trials/:trialId', path))) {
    page = <TrialDetail experimentId={Number(m.id)} trialId={Number(m.trialId)} />;
  } else if ((m = match('/experiments/:id', path))) {
    page = <ExperimentDetail id={Number(m.id)} />;
  } else if (match('/experiments', path)) {
    page = <ExperimentList />;
  } else if (match('/jobs', path)) {
    page = <JobQueue />;
  } else if (match('/clusters', path)) {
    page = <ClusterPage />;
  } else {
    page = (
      <div className="page">
        <h1>Page not found</h1>
        <p>
          There is no page at <code>/det{path}</code>. <Link to="/experiments">Go to experiments</Link>.
        </p>
      </div>
    );
  }
  const logout = async () => {
    try {
      await api('POST', 'auth/logout');
    } catch {
      /* the token is dropped either way */
    }
    setToken(null);
    setUser(null);
    navigate('/login');
  };
  const section = path.split('/')[1];
  return (
    <>
      <nav className="topbar">
        <span className="brand">Determined</span>
        <Link to="/experiments" className={section === 'experiments' ? 'active' : ''}>
          Experiments
        </Link>
        <Link to="/jobs" className={section === 'jobs' ? 'active' : ''}>
          Job Queue
        </Link>
        <Link to="/clusters" className={section === 'clusters' ? 'active' : ''}>
          Cluster
        </Link>
        <span className="spacer" />
        <span className="user" data-testid="current-user">
          {user ?? ''}
        </span>
        <button className="link" onClick={logout}>
          Log out
        </button>
      </nav>
      <main>
        <PageErrorBoundary resetKey={path}>{page}</PageErrorBoundary>
      </main>
    </>
  );
}
