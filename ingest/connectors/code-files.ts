import { mediaTypeOf } from './media-types.js';

/** What code-host connectors share: the files no parser reads (not listed at all: repositories are full of them). */
export const UNREADABLE_FILE = /\.(png|jpe?g|gif|ico|svg|webp|bmp|tiff?|zip|gz|tgz|bz2|xz|7z|rar|jar|war|exe|dll|so|dylib|a|o|obj|class|pyc|woff2?|ttf|otf|eot|mp[34]|wav|mov|avi|mkv|bin|dat|db|sqlite|lock)$/i;

export const DAY_MS = 86_400_000;

/** A text file's media type by name; code and unknown text read as plain text. */
export function codeMediaType(name: string): string {
  const t = mediaTypeOf(name);
  return t === 'application/octet-stream' ? 'text/plain' : t;
}
