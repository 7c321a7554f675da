/**
 * Sign in with an API key: checked against the service, which also opens a dashboard session.
 * The key stays in this tab's sessionStorage; the field is emptied once it is accepted.
 */
import { useEffect, useState } from 'preact/hooks';
import { problemOf, signIn, type Problem } from '../api.js';
import { ProblemNote } from '../components/problem-note.js';
import type { Session } from '../session.js';

export function SignInPage({ onSignedIn }: { onSignedIn: (s: Session) => void }) {
  const [key, setKey] = useState('');
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  useEffect(() => {
    document.title = 'Sign in · Sable';
  }, []);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setProblem(null);
    try {
      const session = await signIn(key.trim());
      setKey('');
      onSignedIn(session);
    } catch (err) {
      setProblem(problemOf(err));
      setBusy(false);
    }
  };

  return (
    <main id="main" class="sign-in">
      <h1>Sable dashboard</h1>
      <form onSubmit={submit} aria-describedby="key-help">
        <label for="api-key">API key</label>
        <input
          id="api-key"
          name="api-key"
          type="password"
          autocomplete="off"
          autofocus
          spellcheck={false}
          required
          value={key}
          onInput={(e) => setKey(e.currentTarget.value)}
        />
        <p id="key-help" class="muted small">
          Paste a key (<code>sable_…</code>; the first start writes one to <code>.sable-data/admin.key</code>). It is kept for this tab only and
          sent to this service alone.
        </p>
        <button type="submit" class="primary" disabled={busy || key.trim() === ''}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <ProblemNote problem={problem} />
    </main>
  );
}
