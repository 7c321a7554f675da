/** The wait a Retry-After header asks for, in milliseconds (delta-seconds or an HTTP date); null when absent or unreadable. */
export function retryAfterMs(value: string | string[] | null | undefined): number | null {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined || v === null || v.trim() === '') return null;
  const seconds = Number(v);
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : null;
  const at = Date.parse(v);
  return Number.isFinite(at) ? Math.max(0, at - Date.now()) : null;
}
