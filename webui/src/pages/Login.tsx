import { useState } from 'react';
import { api, errorText, setToken } from '../api';
import { ErrorBanner } from '../components/common';
import { navigate } from '../router';

export function Login(props: { redirect: string | null; onLogin: (user: string) => void }) {
  const [username, setUsername] = useState('determined');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const r = await api('POST', 'auth/login', { username, password });
      setToken(r.token);
      props.onLogin(r.user?.username ?? username);
      const to = props.redirect && props.redirect.startsWith('/') ? props.redirect : '/experiments';
      navigate(to, true);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="login">
      <form onSubmit={submit} className="card">
        <h1>Determined</h1>
        <label>
          Username
          <input name="username" value={username} autoFocus onChange={(e) => setUsername(e.target.value)} />
        </label>
        <label>
          Password
          <input name="password" type="password" value={password} onChange={(e) => setPassword(e.target.value)} />
        </label>
        <ErrorBanner error={error} />
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </div>
  );
}
