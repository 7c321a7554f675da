/**
 * The shell: the sign-in page until the tab has a session, then the header (nav, who is signed
 * in, sign out) and the page the hash names. Focus moves to a page's heading when it opens, so
 * keyboard and screen-reader users start where the content does.
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { Api, problemOf, type Problem } from './api.js';
import { PAGES } from './pages/index.js';
import { SignInPage } from './pages/sign-in.js';
import { HOME, matchPath, useHashPath } from './router.js';
import { clearSession, loadSession, saveSession, type Session } from './session.js';

export function App() {
  const [session, setSession] = useState(loadSession);
  /** Why the last sign-out could not end the session at the service, shown on the sign-in page. */
  const [signOutProblem, setSignOutProblem] = useState<Problem | null>(null);
  if (!session) {
    return (
      <SignInPage
        signOutProblem={signOutProblem}
        onSignedIn={(s) => {
          saveSession(s);
          setSignOutProblem(null);
          setSession(s);
        }}
      />
    );
  }
  return (
    <Shell
      session={session}
      onSignedOut={(problem) => {
        // The tab forgets the key and the token whether or not the service confirmed the end.
        clearSession();
        setSignOutProblem(problem);
        setSession(null);
        history.replaceState(null, '', location.pathname);
      }}
    />
  );
}

function Shell({ session, onSignedOut }: { session: Session; onSignedOut: (problem: Problem | null) => void }) {
  const path = useHashPath();
  const [menuOpen, setMenuOpen] = useState(false);
  const [signingOut, setSigningOut] = useState(false);
  const api = useMemo(() => new Api(session, saveSession), [session]);
  const signOut = async () => {
    setSigningOut(true);
    let problem: Problem | null = null;
    try {
      await api.endSession();
    } catch (e) {
      problem = problemOf(e);
    }
    onSignedOut(problem);
  };
  const found = PAGES.map((p) => ({ page: p, params: matchPath(p.path, path) })).find((m) => m.params !== null);
  const section = '/' + (path.split('/')[1] ?? '');

  useEffect(() => {
    setMenuOpen(false);
    document.title = `${found?.page.title ?? 'Not found'} · Sable`;
    document.querySelector<HTMLElement>('main h1')?.focus();
  }, [path]);

  const View = found?.page.view;
  return (
    <>
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), document.querySelector<HTMLElement>('main h1')?.focus())}>
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href={'#' + HOME}>
          Sable
        </a>
        <button type="button" class="menu" aria-expanded={menuOpen} aria-controls="nav" onClick={() => setMenuOpen(!menuOpen)}>
          Menu
        </button>
        <nav id="nav" aria-label="Main" class={menuOpen ? 'open' : ''}>
          <ul>
            {PAGES.filter((p) => p.nav).map((p) => (
              <li key={p.path}>
                <a href={'#' + p.path} aria-current={section === p.path ? 'page' : undefined}>
                  {p.nav}
                </a>
              </li>
            ))}
          </ul>
          <div class="who">
            <span>
              {session.role ? `${session.role} key` : 'key of unknown role'}
              {session.orgId && (
                <>
                  {' · org '}
                  <code title={session.orgId}>{session.orgId.slice(0, 8)}</code>
                </>
              )}
            </span>
            <button type="button" onClick={signOut} disabled={signingOut}>
              {signingOut ? 'Signing out…' : 'Sign out'}
            </button>
          </div>
        </nav>
      </header>
      <main id="main">
        {View ? (
          <View key={path} params={found.params!} api={api} session={session} />
        ) : (
          <>
            <h1 tabIndex={-1}>Not found</h1>
            <p>
              The dashboard has no page at <code>{path}</code>. <a href={'#' + HOME}>Datasets</a>
            </p>
          </>
        )}
      </main>
    </>
  );
}
