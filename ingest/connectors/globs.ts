/**
 * Glob patterns of source configs (file_patterns, include_globs, exclude_globs): `*` is any run
 * of characters but `/`, `**` any run including `/`, `?` one character, `{a,b}` either. A pattern
 * without a `/` is matched against the file's name, one with a `/` against its whole path.
 */
export function globMatcher(patterns: readonly string[]): (path: string) => boolean {
  const compiled = patterns.map((p) => ({ re: toRegExp(p), onName: !p.includes('/') }));
  return (path) => {
    const name = path.slice(path.lastIndexOf('/') + 1);
    return compiled.some((c) => c.re.test(c.onName ? name : path));
  };
}

function toRegExp(glob: string): RegExp {
  let out = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*' && glob[i + 1] === '*') {
      // "**/" also matches no directory at all.
      const slash = glob[i + 2] === '/';
      out += slash ? '(?:.*/)?' : '.*';
      i += slash ? 2 : 1;
    } else if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else if (c === '{') {
      const end = glob.indexOf('}', i);
      if (end < 0) out += '\\{';
      else {
        out += `(?:${glob.slice(i + 1, end).split(',').map(escape).join('|')})`;
        i = end;
      }
    } else out += escape(c);
  }
  return new RegExp(`^${out}$`, 'i');
}

function escape(s: string): string {
  return s.replace(/[.+^${}()|[\]\\*?]/g, '\\$&');
}

/** An object key as patterns see it: below the source's prefix. */
export function belowPrefix(key: string, prefix: string | undefined): string {
  if (!prefix || !key.startsWith(prefix)) return key;
  return key.slice(prefix.length).replace(/^\/+/, '');
}
