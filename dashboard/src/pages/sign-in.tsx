/**
 * Sign in with an API key: the service checks it as it opens a dashboard session, which names the
 * key's role and organization.
 * The key stays in this tab's sessionStorage; the field is emptied once it is accepted.
 */
import { useEffect, useState } from 'preact/hooks';
import { problemOf, signIn, type Problem } from '../api.js';
import { ProblemNote } from '../components/problem-note.js';
import type { Session } from '../session.js';

interface Props {
  onSignedIn: (s: Session) => void;
  /** The last sign-out left the session open at the service (it then lapses within the hour). */
  signOutProblem: Problem | null;
}

export function SignInPage({ onSignedIn, signOutProblem }: Props) {
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
      {signOutProblem && (
        <div class="problem" role="alert">
          <p>Signed out of this tab, but the service did not end the session: {signOutProblem.message}. It lapses within the hour.</p>
        </div>
      )}
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
