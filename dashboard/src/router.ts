/**
 * Routes in the URL's hash (`#/datasets/<id>`): the service serves one page, so a reload or a
 * shared link lands on the same view without the server knowing the dashboard's paths.
 */
import { useEffect, useState } from 'preact/hooks';

export const HOME = '/datasets';

export function currentPath(): string {
  let path: string;
  try {
    path = decodeURI(location.hash.slice(1));
  } catch {
    return HOME;
  }
  return path.startsWith('/') ? path : HOME;
}

export function useHashPath(): string {
  const [path, setPath] = useState(currentPath);
  useEffect(() => {
    const changed = () => setPath(currentPath());
    addEventListener('hashchange', changed);
    // Effects run after the first paint: a hash changed before then fired no event we heard.
    changed();
    return () => removeEventListener('hashchange', changed);
  }, []);
  return path;
}

/** The `:name` segments of `pattern` read from `path`, or null when they do not match. */
export function matchPath(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split('/').filter(Boolean);
  const got = path.split('/').filter(Boolean);
  if (want.length !== got.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    if (want[i]!.startsWith(':')) params[want[i]!.slice(1)] = decodeURIComponent(got[i]!);
    else if (want[i] !== got[i]) return null;
  }
  return params;
}

export function href(...segments: string[]): string {
  return '#/' + segments.map(encodeURIComponent).join('/');
}

export function go(...segments: string[]): void {
  location.hash = href(...segments);
}
