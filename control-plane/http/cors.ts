/**
 * Cross-origin calls from browsers (CORS), for the origins SABLE_CORS_ORIGINS names (none by
 * default). A preflight of an allowed origin is answered for every route, streams and uploads
 * included, with the methods the path takes; answers to an allowed origin name it and expose the
 * headers a client reads (request id, Retry-After, Allow). API keys travel in headers, never as
 * cookies, so no credentials mode is needed.
 */
import { json, type Request, type Response } from './types.js';

/** Request headers a page may send. */
export const CORS_REQUEST_HEADERS = ['accept', 'authorization', 'content-type', 'last-event-id', 'x-api-key', 'x-request-id'];
/** Answer headers a page may read. */
export const CORS_EXPOSED_HEADERS = ['x-request-id', 'retry-after', 'allow', 'location', 'content-disposition'];
const MAX_AGE_SECONDS = 600;

export class Cors {
  private readonly any: boolean;
  private readonly origins: Set<string>;

  constructor(origins: string[]) {
    this.any = origins.includes('*');
    this.origins = new Set(origins);
  }

  get enabled(): boolean {
    return this.any || this.origins.size > 0;
  }

  /**
   * A preflight's answer (OPTIONS with Origin and Access-Control-Request-Method), or null when the
   * request is none or CORS is off (then OPTIONS answers 405 as any unrouted method does).
   * `methodsOf` gives the methods a path takes, undefined when no route has it.
   */
  preflight(req: Request, methodsOf: (path: string) => string[] | undefined): Response | null {
    const origin = req.headers.origin;
    if (req.method !== 'OPTIONS' || origin === undefined || req.headers['access-control-request-method'] === undefined || !this.enabled) return null;
    if (!this.allows(origin)) return json(403, { error: 'forbidden', message: `origin ${origin} may not call this API from a browser (SABLE_CORS_ORIGINS)` }, { vary: 'Origin' });
    const methods = methodsOf(req.path);
    if (methods === undefined) return json(404, { error: 'not_found', message: `no route for ${req.path}` }, this.originHeaders(origin));
    return {
      status: 204,
      headers: {
        ...this.originHeaders(origin),
        'access-control-allow-methods': [...methods, 'OPTIONS'].join(', '),
        'access-control-allow-headers': CORS_REQUEST_HEADERS.join(', '),
        'access-control-max-age': String(MAX_AGE_SECONDS),
      },
    };
  }

  /** The answer to an allowed origin's call, with the CORS headers a browser needs to hand it over. */
  decorate(req: Request, res: Response): void {
    const origin = req.headers.origin;
    if (origin === undefined || !this.enabled || !this.allows(origin)) return;
    res.headers = { ...res.headers, ...this.originHeaders(origin), 'access-control-expose-headers': CORS_EXPOSED_HEADERS.join(', ') };
  }

  private allows(origin: string): boolean {
    return this.any || this.origins.has(origin);
  }

  private originHeaders(origin: string): Record<string, string> {
    return { 'access-control-allow-origin': origin, vary: 'Origin' };
  }
}
