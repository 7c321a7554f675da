// Sends fuzz cases to the service and holds every answer to the contract: an answer within the
// time bound, no 5xx but an upstream's 502 or a provisioning 503, `{error, message}` with a
// registered code on every error, the status an unauthenticated or foreign request must get.
// A crash is recorded with the request in flight and the service is started again on the same
// data, so one run reports every crash it can find.
import { unpack } from 'msgpackr';
import { ERROR_CODES } from '../../../dist/errors/codes.js';
import { rawRequest, type RawAnswer } from './raw-http.js';
import type { FuzzReport } from './report.js';
import { startFuzzedService, type FuzzedService } from './service.js';

export interface Case {
  /** The route pattern as the OpenAPI document spells it, e.g. `POST /datasets/{datasetId}/insert`. */
  route: string;
  method: string;
  /** Path and query. */
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  /** The statuses this case must get (an auth failure); otherwise any 2xx, 3xx or 4xx. */
  expect?: number[];
  /** Names a resource of another organization: must not succeed. */
  foreign?: boolean;
  /** The node:http listener of uploads instead of the main one (the same routes). */
  listener?: 'main' | 'upload';
  /** What kind of case this is, for the problem list. */
  label: string;
}

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

/** Codes an error body may show: the registry's. */
const CODES = new Set(Object.keys(ERROR_CODES));
/** Routes whose error answers are pages for a browser, documented as such. */
const PAGES = new Set(['GET /connections/callback']);

export class Runner {
  private sampler: NodeJS.Timeout | undefined;
  uploadUrl = '';
  /** Peak RSS since the caller last reset it (for the report: which cases cost memory). */
  windowPeak = 0;
  /** Cases sent twice because the first connection closed without an answer. */
  retried = 0;
  /** Stack traces of 500s already reported (stderr is read after each case). */
  private seen500 = 0;

  constructor(
    public svc: FuzzedService,
    readonly report: FuzzReport,
    readonly opts: { timeoutMs: number; env?: Record<string, string>; onRestart?: (r: Runner) => Promise<void> },
  ) {
    this.sample();
  }

  get url(): string {
    return this.svc.url;
  }

  private sample(): void {
    clearInterval(this.sampler);
    this.sampler = setInterval(() => {
      const rss = this.svc.rss();
      if (rss !== null && rss > this.report.peakRss) this.report.peakRss = rss;
      if (rss !== null && rss > this.windowPeak) this.windowPeak = rss;
    }, 100);
    this.sampler.unref();
  }

  stopSampling(): void {
    clearInterval(this.sampler);
  }

  alive(): boolean {
    return this.svc.exit === null;
  }

  /** After a crash: the service again on the same data directory. */
  private async restart(c: Case, why: string): Promise<void> {
    const exit = this.svc.exit;
    this.report.crashes.push(`${c.route} (${c.label}): ${why}; exit ${exit?.code ?? exit?.signal}; request ${describe(c)}; stderr: ${this.svc.stderr().slice(-1500)}`);
    if (this.svc.exit === null) {
      const gone = new Promise((r) => this.svc.child.once('exit', r));
      this.svc.child.kill('SIGKILL');
      await gone;
    }
    this.svc = await startFuzzedService(this.svc.dir, this.opts.env);
    this.seen500 = 0;
    this.sample();
    await this.opts.onRestart?.(this);
  }

  /** Sends a case and checks the answer; resolves with it (null when there was none). */
  async send(c: Case): Promise<Answer | null> {
    const base = c.listener === 'upload' && this.uploadUrl ? this.uploadUrl : this.url;
    const started = performance.now();
    let answer: Answer | null = null;
    const attempt = async () => {
      const res = await fetch(base + c.path, {
        method: c.method,
        headers: c.headers,
        body: c.body as BodyInit | undefined,
        redirect: 'manual',
        signal: AbortSignal.timeout(this.opts.timeoutMs),
      });
      const bytes = Buffer.from(await res.arrayBuffer());
      return { status: res.status, headers: res.headers, text: bytes.toString('utf8'), json: parsed(res.headers, bytes) };
    };
    try {
      try {
        answer = await attempt();
      } catch (e) {
        // A kept-alive connection the service closed as it idled (its timeout) just as this
        // request went out: what any client does is try once more, on a new connection.
        if ((e as Error).name === 'TimeoutError' || !this.alive()) throw e;
        this.retried++;
        answer = await attempt();
      }
    } catch (e) {
      const ms = performance.now() - started;
      await settle();
      if (!this.alive()) {
        this.report.count(c.route, 'crash', ms);
        await this.restart(c, `no answer (${(e as Error).message})`);
        return null;
      }
      const hung = (e as Error).name === 'TimeoutError';
      this.report.count(c.route, hung ? 'timeout' : 'closed', ms);
      this.report.problem(c.route, hung ? `no answer within ${this.opts.timeoutMs} ms (${c.label})` : `connection closed without an answer: ${(e as Error).message}; ${(e as { cause?: Error }).cause?.message ?? ''} (${c.label})`, describe(c));
      await this.unlessHealthy(c);
      return null;
    }
    this.report.count(c.route, answer.status, performance.now() - started);
    for (const p of this.problemsOf(c, answer)) this.report.problem(c.route, `${p} (${c.label})`, describe(c));
    this.stderr500s(c);
    return answer;
  }

  /** Writes a raw request; a status is checked as `send` checks it, a close without one is counted. */
  /**
   * `mayClose`: bytes that are not HTTP/1.1 with a valid framing, which a server may drop (close,
   * or leave until its idle timeout) without an answer, as long as it stays up;
   * `givesUp`: the client stops sending midway and leaves, so no answer is due (the service must
   * only stay up).
   */
  async sendRaw(c: Case, parts: (string | Buffer)[], opts: { timeoutMs?: number; gapMs?: number; mayClose?: boolean; givesUp?: boolean } = {}): Promise<RawAnswer> {
    const base = c.listener === 'upload' && this.uploadUrl ? this.uploadUrl : this.url;
    const started = performance.now();
    const out = await rawRequest(base, parts, opts.timeoutMs ?? this.opts.timeoutMs, opts.gapMs);
    const ms = performance.now() - started;
    await settle();
    if (!this.alive()) {
      this.report.count(c.route, 'crash', ms);
      await this.restart(c, 'the process exited');
      return out;
    }
    if (out.status === null && opts.givesUp) {
      this.report.count(c.route, 'client left', ms);
      await this.unlessHealthy(c);
      return out;
    }
    if (out.status === null) {
      this.report.count(c.route, opts.mayClose ? 'dropped' : out.timedOut ? 'timeout' : 'closed', ms);
      if (!opts.mayClose) this.report.problem(c.route, out.timedOut ? `no answer within the time bound (${c.label})` : `closed without an answer (${c.label})`, describe(c));
      await this.unlessHealthy(c);
      return out;
    }
    this.report.count(c.route, out.status, ms);
    const headers = new Headers();
    for (const [k, v] of Object.entries(out.headers)) headers.set(k, v);
    for (const p of this.problemsOf(c, { status: out.status, headers, text: out.body, json: parsed(headers, out.bytes) })) this.report.problem(c.route, `${p} (${c.label})`, describe(c));
    this.stderr500s(c);
    return out;
  }

  /**
   * After a case without an answer: a service that no longer answers /healthz either (a process
   * that is exiting but held by its threads, an event loop that is stuck) counts as a crash, is
   * killed and started again.
   */
  private async unlessHealthy(c: Case): Promise<void> {
    const ok = await fetch(`${this.url}/healthz`, { signal: AbortSignal.timeout(5000) }).then((r) => r.ok, () => false);
    if (ok) return;
    this.report.count(c.route, 'crash', 0);
    await this.restart(c, 'the service stopped answering /healthz');
  }

  problemsOf(c: Case, a: Answer): string[] {
    const out: string[] = [];
    const { status, json } = a;
    if (status >= 500) {
      const upstream = status === 502 && json?.error === 'upstream_error';
      const provisioning = status === 503 && json?.error === 'dataset_not_ready' && a.headers.get('retry-after') !== null;
      if (!upstream && !provisioning) out.push(`answered ${status} ${a.text.slice(0, 200)}`);
    }
    if (status >= 400 && !PAGES.has(c.route)) {
      const msgpack = a.headers.get('content-type') === 'application/msgpack';
      const askedMsgpack = Object.entries(c.headers).some(([k, v]) => /^(accept|content-type)$/i.test(k) && /msgpack/i.test(v));
      if (msgpack && !askedMsgpack) out.push(`an error in msgpack to a caller that asked for none: ${a.text.slice(0, 200)}`);
      if (!json || typeof json !== 'object' || Array.isArray(json)) out.push(`error body is not a ${msgpack ? 'msgpack map' : 'JSON object'}: ${a.text.slice(0, 200)}`);
      else if (typeof json.error !== 'string' || typeof json.message !== 'string') out.push(`error body is not {error, message}: ${a.text.slice(0, 200)}`);
      else if (!CODES.has(json.error)) out.push(`error code ${json.error} is not in the registry`);
    }
    if (status < 300 && a.headers.get('content-type')?.includes('json') && json === undefined && a.text !== '') out.push('a JSON answer that does not parse');
    if (c.expect && !c.expect.includes(status)) out.push(`answered ${status}, expected ${c.expect.join(' or ')}: ${a.text.slice(0, 200)}`);
    // Before authentication only routing answers 404 (not_found): a resource's 404 would tell a
    // caller without a key what exists.
    if (c.expect?.includes(401) && (status === 404 || status === 405) && !['not_found', 'method_not_allowed'].includes(json?.error)) out.push(`answered ${status} ${json?.error} before authentication`);
    if (c.foreign && status < 400) out.push(`answered ${status} for another organization's resource: ${a.text.slice(0, 200)}`);
    for (const [k, v] of a.headers) if (/[\r\n]/.test(v) || k.startsWith('x-injected')) out.push(`answer header ${k} carries injected text`);
    return out;
  }

  /** 500s log their stack on stderr: each new one is a problem of the case that caused it. */
  private stderr500s(c: Case): void {
    const lines = this.svc.linesStartingWith('sable: ').filter((l) => / failed:/.test(l) && !/index rebuild/.test(l));
    for (const l of lines.slice(this.seen500)) this.report.problem(c.route, `stderr: ${l.length > 300 ? `${l.slice(0, 120)}…${l.slice(l.indexOf(' failed:'), l.indexOf(' failed:') + 180)}` : l}`, describe(c));
    this.seen500 = lines.length;
  }
}

/** The body as a value: msgpack when the answer says so (a caller that asked for it), else JSON. */
function parsed(headers: Headers, bytes: Buffer): any {
  if (headers.get('content-type') !== 'application/msgpack') return parseJson(bytes.toString('utf8'));
  try {
    return unpack(bytes);
  } catch {
    return undefined;
  }
}

function parseJson(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A moment for an exit event to arrive after a dropped connection. */
function settle(): Promise<void> {
  return new Promise((r) => setTimeout(r, 30));
}

export function describe(c: Case): string {
  const body = c.body === undefined ? '' : typeof c.body === 'string' ? c.body : `<${c.body.length} bytes: ${c.body.subarray(0, 80).toString('hex')}>`;
  const headers = Object.entries(c.headers)
    .map(([k, v]) => `${k}: ${/key|authorization/i.test(k) ? `${v.slice(0, 12)}…` : v}`)
    .join('; ');
  return `${c.method} ${c.path.length > 300 ? `${c.path.slice(0, 300)}…(${c.path.length})` : c.path} [${headers}] ${body.length > 400 ? `${body.slice(0, 400)}…(${body.length} chars)` : body}`;
}
