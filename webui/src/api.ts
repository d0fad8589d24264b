// The REST client: the token lives in a cookie named `auth` (as Determined's UI) and goes out as
// `Authorization: Bearer`. Errors carry the API's own message; a 401 sends the user to login.

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

const COOKIE = 'auth';

export function getToken(): string | null {
  for (const part of document.cookie.split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === COOKIE) return decodeURIComponent(v.join('='));
  }
  return null;
}

export function setToken(token: string | null): void {
  if (token === null) {
    document.cookie = `${COOKIE}=; path=/; max-age=0; SameSite=Strict`;
  } else {
    document.cookie = `${COOKIE}=${encodeURIComponent(token)}; path=/; SameSite=Strict`;
  }
}

let onUnauthorized: () => void = () => undefined;
export function setUnauthorizedHandler(fn: () => void): void {
  onUnauthorized = fn;
}

function headers(extra?: Record<string, string>): Record<string, string> {
  const h: Record<string, string> = { ...extra };
  const t = getToken();
  if (t) h.Authorization = `Bearer ${t}`;
  return h;
}

// The message of a Determined error body {"error":{"error": "..."}} or {"message": "..."}.
async function errorOf(resp: Response): Promise<ApiError> {
  let msg = `${resp.status} ${resp.statusText}`;
  try {
    const text = await resp.text();
    try {
      const body = JSON.parse(text);
      const e = body?.error;
      msg = (typeof e === 'string' ? e : e?.error || e?.message) || body?.message || msg;
    } catch {
      if (text.trim()) msg = text.trim().slice(0, 500);
    }
  } catch {
    /* keep the status line */
  }
  return new ApiError(msg, resp.status);
}

export async function api<T = any>(
  method: string,
  path: string,
  body?: unknown,
  signal?: AbortSignal,
): Promise<T> {
  let resp: Response;
  try {
    resp = await fetch(`/api/v1/${path}`, {
      method,
      headers: headers(body === undefined ? undefined : { 'Content-Type': 'application/json' }),
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
      // The master's login also sets an HttpOnly `auth` cookie, which would shadow the one this
      // app keeps (scripts can neither read nor replace it): take no cookies from responses.
      credentials: 'omit',
    });
  } catch (e) {
    if ((e as Error).name === 'AbortError') throw e;
    throw new ApiError(`cannot reach the master: ${(e as Error).message}`, 0);
  }
  if (resp.status === 401) {
    const err = await errorOf(resp);
    if (!path.startsWith('auth/login')) {
      setToken(null);
      onUnauthorized();
    }
    throw err;
  }
  if (!resp.ok) throw await errorOf(resp);
  const text = await resp.text();
  return (text ? JSON.parse(text) : {}) as T;
}

// Reads a newline-delimited JSON stream ({"result": ...} or {"error": ...} per line), calling
// onItem for every result until the stream ends or `signal` aborts.
export async function streamNdjson(
  path: string,
  onItem: (item: any) => void,
  signal: AbortSignal,
): Promise<void> {
  const resp = await fetch(`/api/v1/${path}`, { headers: headers(), signal, credentials: 'omit' });
  if (resp.status === 401) {
    setToken(null);
    onUnauthorized();
  }
  if (!resp.ok || !resp.body) throw await errorOf(resp);
  const reader = resp.body.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true });
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl).trim();
      buf = buf.slice(nl + 1);
      if (!line) continue;
      const msg = JSON.parse(line);
      if (msg.error) throw new ApiError(msg.error.error || msg.error.message || 'stream error', 0);
      onItem(msg.result);
    }
  }
}

export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
