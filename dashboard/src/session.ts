/**
 * The signed-in tab: the API key and the dashboard session token, kept in sessionStorage only,
 * so they live as long as the tab and no other tab or window reads them. Nothing here logs or
 * renders either; the key is read back only to build the client's headers.
 */

export type Role = 'admin' | 'member';

export interface Session {
  apiKey: string;
  /** The session token of POST /auth/sessions, for the dashboard routes (Authorization: Bearer). */
  token: string;
  expiresAt: string;
  /** The key's role, as POST /auth/sessions named it (null in a tab signed in before it did). */
  role: Role | null;
  /** The key's organization, as POST /auth/sessions named it. */
  orgId: string | null;
}

const STORAGE_KEY = 'sable.dashboard.session';

export function loadSession(): Session | null {
  const raw = sessionStorage.getItem(STORAGE_KEY);
  if (raw === null) return null;
  try {
    const s = JSON.parse(raw) as Session;
    return typeof s.apiKey === 'string' && typeof s.token === 'string' ? s : null;
  } catch {
    return null;
  }
}

export function saveSession(session: Session): void {
  sessionStorage.setItem(STORAGE_KEY, JSON.stringify(session));
}

/** Signing out forgets everything the tab kept, not only the session. */
export function clearSession(): void {
  sessionStorage.clear();
}
