/**
 * Error texts of calls to outside providers (rerankers, embedding APIs): the provider's own
 * message when its body carries one, the network cause undici hides, clipped, and never the
 * caller's API key, even when the provider echoes it back.
 */

/** Longest provider-supplied text carried into an error message. */
const MAX_DETAIL = 200;

/** Cohere errors carry `message`; OpenAI `error.message`; Jina (FastAPI) carries `detail`, a string or a list of {msg}. */
export function providerMessage(text: string): string {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return '';
  }
  if (typeof data !== 'object' || data === null) return '';
  const { message, detail, error } = data as Record<string, unknown>;
  if (typeof message === 'string') return clip(message);
  if (typeof detail === 'string') return clip(detail);
  if (Array.isArray(detail)) return clip(detail.map((d) => (typeof d?.msg === 'string' ? d.msg : JSON.stringify(d))).join('; '));
  if (typeof error === 'string') return clip(error);
  if (typeof (error as { message?: unknown } | null)?.message === 'string') return clip((error as { message: string }).message);
  return '';
}

/** undici's "fetch failed" hides the useful part (ECONNREFUSED, ENOTFOUND...) in `cause`. */
export function networkCause(e: unknown): string {
  const cause = (e as { cause?: { code?: unknown; message?: unknown } })?.cause;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string') return clip(cause.message);
  return clip(String((e as Error)?.message ?? e));
}

export function clip(s: string): string {
  return s.length > MAX_DETAIL ? s.slice(0, MAX_DETAIL) + '…' : s;
}

export function redact(message: string, key: string | undefined): string {
  return key ? message.split(key).join('[redacted]') : message;
}

/**
 * `text` without the credentials of an Authorization header: the header, its token, and for
 * Basic auth the decoded user:password and the password. For a service's words quoted back in
 * an error, before they are clipped (a clipped credential would no longer match).
 */
export function withoutCredentials(text: string, authorization: string | undefined): string {
  if (!authorization) return text;
  const forms = [authorization];
  const m = /^(Basic|Bearer)\s+(\S+)$/i.exec(authorization);
  if (m) {
    forms.push(m[2]);
    if (m[1].toLowerCase() === 'basic') {
      const pair = Buffer.from(m[2], 'base64').toString('utf8');
      forms.push(pair, pair.slice(pair.indexOf(':') + 1));
    }
  }
  return forms.filter((f) => f.length >= 6).sort((a, b) => b.length - a.length).reduce((t, f) => redact(t, f), text);
}
