// The HTTP adapters as the service meets them: uWebSockets.js only where its native binary loads
// (never its JS emulation), node:http otherwise, named in the start line, /healthz and /metrics;
// and a request whose handler throws, rejects or answers what cannot be sent gets a 500 while
// the process serves on.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { SableError } from '../../dist/errors/codes.js';
import { createHttpServer, pickAdapter } from '../../dist/control-plane/http/server.js';
import type { HttpServer, Request, Response } from '../../dist/control-plane/http/types.js';
import { ADAPTERS, adapterMissing, uwsMissing } from '../support/adapters.js';
import { serve, type Served } from '../support/serve.js';

const CLI = join(__dirname, '..', '..', 'dist', 'control-plane', 'cli.js');
const NO_UWS = join(__dirname, '..', 'support', 'no-uws.cjs');
/** A 500 of the HTTP layer: the code, and the request id its log line names (body and header alike). */
async function expectInternal(res: globalThis.Response): Promise<void> {
  const body = await res.json();
  const id = res.headers.get('x-request-id');
  expect(id).toMatch(/^[0-9a-f-]{36}$/);
  expect(body).toEqual({ error: 'internal', message: `internal error (request ${id}: quote it to the operator, whose log has the cause)`, request_id: id });
}

/** Routes that fail in every way a handler can; `/ok` answers, to show the server still does. */
function failingHandler(req: Request): Promise<Response> {
  switch (req.path) {
    case '/ok':
      return Promise.resolve({ status: 200, headers: { 'content-type': 'application/json' }, body: '{"ok":true}' });
    case '/throws':
      throw new TypeError('a bug, thrown before any await');
    case '/rejects':
      return Promise.reject(new RangeError('a bug, after an await'));
    case '/refuses':
      return Promise.reject(new SableError('invalid_request', 'refused by the handler'));
    case '/header-number':
      return Promise.resolve({ status: 200, headers: { 'x-count': 5 as unknown as string }, body: 'x' });
    case '/header-break':
      return Promise.resolve({ status: 200, headers: { 'x-name': 'a\r\nx-injected: yes' }, body: 'x' });
    case '/stream-fails': {
      let sent = false;
      const body = new Readable({
        read() {
          if (!sent) {
            sent = true;
            this.push('{"partial":');
          } else setImmediate(() => this.destroy(new Error('the source failed mid-answer')));
        },
      });
      return Promise.resolve({ status: 200, headers: { 'content-type': 'application/json' }, body });
    }
    case '/upload-throws':
      throw new Error('a bug in a streamed route');
    default:
      return Promise.resolve({ status: 404, body: '' });
  }
}

for (const adapter of ADAPTERS) {
  describe.skipIf(adapterMissing(adapter))(`a failing handler over ${adapter} (uWS: ${uwsMissing ?? 'loads'})`, () => {
    let server: HttpServer;
    let url: string;
    const crashes: unknown[] = [];
    const onCrash = (e: unknown) => crashes.push(e);
    let logged: ReturnType<typeof vi.spyOn<Console, 'error'>>;

    beforeAll(async () => {
      logged = vi.spyOn(console, 'error').mockImplementation(() => undefined);
      process.on('uncaughtException', onCrash);
      process.on('unhandledRejection', onCrash);
      server = createHttpServer(failingHandler, { maxBodyBytes: 1 << 20, adapter: pickAdapter(adapter), streams: (_m, path) => path === '/upload-throws' });
      url = `http://127.0.0.1:${await server.listen('127.0.0.1', 0)}`;
    });
    afterAll(async () => {
      await server.close();
      process.off('uncaughtException', onCrash);
      process.off('unhandledRejection', onCrash);
      logged.mockRestore();
    });
    afterEach(async () => {
      // The server still answers, and nothing escaped to the process.
      const ok = await fetch(url + '/ok');
      expect(ok.status).toBe(200);
      expect(await ok.json()).toEqual({ ok: true });
      expect(crashes).toEqual([]);
    });

    it('names the adapter it serves with', () => {
      expect(server.adapter).toBe(adapter === 'uws' ? 'uWebSockets.js' : 'node:http');
      expect(server.detail).toMatch(adapter === 'uws' ? /^native binary \S+ \S+ uws_\w+_\d+\.node$/ : /SABLE_HTTP_ADAPTER=node/);
    });

    for (const [path, what] of [['/throws', 'throws synchronously'], ['/rejects', 'rejects'], ['/header-break', 'answers a header with a line break']]) {
      it(`a handler that ${what}: 500 {error, message}`, async () => {
        const res = await fetch(url + path);
        expect(res.status).toBe(500);
        expect(res.headers.get('content-type')).toBe('application/json');
        expect(res.headers.get('x-injected')).toBeNull();
        await expectInternal(res);
        expect(logged.mock.calls.some((c) => String(c[0]).startsWith('sable:'))).toBe(true);
      });
    }

    it('a header value given as a number is sent as its decimal string', async () => {
      const res = await fetch(url + '/header-number');
      expect(res.status).toBe(200);
      expect(res.headers.get('x-count')).toBe('5');
    });

    it("a SableError from the handler keeps its code's answer", async () => {
      const res = await fetch(url + '/refuses');
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: 'invalid_request', message: 'refused by the handler' });
    });

    it('a streamed route whose handler throws: 500, the body is not read', async () => {
      const res = await fetch(url + '/upload-throws', { method: 'POST', body: Buffer.alloc(64 * 1024, 1) });
      expect(res.status).toBe(500);
      await expectInternal(res);
    });

    it('a streamed answer whose source fails: the connection ends, the server serves on', async () => {
      const res = await fetch(url + '/stream-fails');
      expect(res.status).toBe(200);
      await expect(res.text()).rejects.toThrow();
    });
  });
}

/** Sends raw bytes and resolves with everything the server answered before closing. */
function raw(url: string, bytes: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.end(bytes));
    let got = '';
    socket.on('data', (c) => (got += String(c)));
    socket.on('close', () => resolve(got));
    socket.on('error', reject);
    socket.setTimeout(5000, () => socket.destroy());
  });
}

async function health(url: string): Promise<Record<string, string>> {
  const res = await fetch(url + '/healthz');
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, string>;
}

async function adapterLine(served: Served): Promise<string> {
  for (let i = 0; i < 100 && !/http adapter/.test(served.stderr()); i++) await new Promise((r) => setTimeout(r, 50));
  return /sable: http adapter .*/.exec(served.stderr())?.[0] ?? '';
}

describe('sable serve picks its adapter honestly', () => {
  const dirs: string[] = [];
  const newDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'sable-adapter-'));
    dirs.push(dir);
    return dir;
  };
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('serves on uWS where its native binary loads, else node:http; the start line, /healthz and /metrics agree', async () => {
    const served = await serve(newDir());
    try {
      const want = uwsMissing === null ? 'uWebSockets.js' : 'node:http';
      const line = await adapterLine(served);
      expect(line).toContain(`http adapter ${want} (`);
      expect(line).toContain(`on Node ${process.version}`);
      expect(await health(served.url)).toMatchObject({ status: 'ok', adapter: want, node: process.version });
      expect(await (await fetch(served.url + '/metrics')).text()).toContain(`sable_info{adapter="${want}",node="${process.version}"} 1`);
      // The alias package's JS emulation announces itself when it loads: it never does.
      expect(served.stderr()).not.toMatch(/Falling back|fallback implementation/i);
    } finally {
      await served.stop('SIGTERM');
    }
  });

  it('with uWS made unavailable it serves on node:http, says why, and never loads the emulation', async () => {
    const served = await serve(newDir(), { NODE_OPTIONS: `--require ${NO_UWS}` });
    try {
      const line = await adapterLine(served);
      expect(line).toMatch(/http adapter node:http \(uWebSockets\.js not used: no native uWebSockets\.js binary loads on Node v\d+/);
      expect(await health(served.url)).toMatchObject({ adapter: 'node:http' });
      expect(await (await fetch(served.url + '/metrics')).text()).toContain('sable_info{adapter="node:http"');
      expect(served.stderr()).not.toMatch(/Falling back|fallback implementation/i);
    } finally {
      await served.stop('SIGTERM');
    }
  });

  it('SABLE_HTTP_ADAPTER=uws where no binary loads fails the start with a clear message (exit 2)', async () => {
    const dir = newDir();
    const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--data-dir', dir], {
      env: { ...process.env, SABLE_HTTP_ADAPTER: 'uws', NODE_OPTIONS: `--require ${NO_UWS}` },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c) => (out += String(c)));
    child.stderr.on('data', (c) => (out += String(c)));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(2);
    expect(out).toMatch(/^sable: SABLE_HTTP_ADAPTER=uws, but no native uWebSockets\.js binary loads on Node v\d+\S* \(ABI \d+, \w+-\w+\): .*Set SABLE_HTTP_ADAPTER=auto or node/m);
    expect(out).not.toContain('listening');
  });

  for (const adapter of ADAPTERS) {
    it.skipIf(adapterMissing(adapter))(`over ${adapter}, request targets a URL parser refuses are answered and the service serves on`, async () => {
      const served = await serve(newDir(), { SABLE_HTTP_ADAPTER: adapter });
      try {
        for (const target of ['http://[bad', '/datasets/../../etc/passwd', '/a\\b?x=%zz', '*', '//x//y/?&&=']) {
          const answer = await raw(served.url, `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
          // uWS closes the connection on a request line it cannot parse, without an answer.
          expect(answer, target).toMatch(adapter === 'uws' && !target.startsWith('/') ? /^$|^HTTP\/1\.1 [45]\d\d / : /^HTTP\/1\.1 [45]\d\d /);
        }
        expect(await health(served.url)).toMatchObject({ adapter: adapter === 'uws' ? 'uWebSockets.js' : 'node:http' });
        expect(served.child.exitCode).toBeNull();
      } finally {
        await served.stop('SIGTERM');
      }
    });
  }
});
