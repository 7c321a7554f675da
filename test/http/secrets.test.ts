import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { SableError } from '../../dist/errors/codes.js';
import { Router, type Caller } from '../../dist/control-plane/http/router.js';
import { createHttpServer, pickAdapter } from '../../dist/control-plane/http/server.js';
import { ADAPTERS, adapterMissing } from '../support/adapters.js';
import type { HttpServer } from '../../dist/control-plane/http/types.js';
import { secretRoutes } from '../../dist/control-plane/routes/secrets.js';
import { loadMasterKey, parseMasterKey } from '../../dist/catalog/secrets/master-key.js';
import { SecretDecryptError, SecretStore } from '../../dist/catalog/secrets/store.js';
import { ControlStore } from '../../dist/catalog/store.js';

const tempDir = () => mkdtempSync(join(tmpdir(), 'sable-secrets-'));

describe('master key', () => {
  let dir: string;
  beforeEach(() => (dir = tempDir()));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('reads 64 hex characters or base64 of 32 bytes from the config, and creates no key file', () => {
    const raw = randomBytes(32);
    expect(loadMasterKey(dir, raw.toString('hex'))).toEqual(raw);
    expect(loadMasterKey(dir, raw.toString('hex').toUpperCase())).toEqual(raw);
    expect(loadMasterKey(dir, raw.toString('base64'))).toEqual(raw);
    expect(loadMasterKey(dir, raw.toString('base64').replace(/=$/, ''))).toEqual(raw);
    expect(loadMasterKey(dir, raw.toString('base64url'))).toEqual(raw);
    expect(loadMasterKey(dir, ` ${raw.toString('hex')}\n`)).toEqual(raw);
    expect(existsSync(join(dir, 'master.key'))).toBe(false);
  });

  it('refuses anything else with a clear startup error that does not echo the value', () => {
    const bad = ['', 'secret', 'a'.repeat(63), 'g'.repeat(64), randomBytes(31).toString('base64'), randomBytes(33).toString('base64'), randomBytes(32).toString('hex') + '00'];
    for (const value of bad) {
      let err: unknown;
      try {
        loadMasterKey(dir, value);
      } catch (e) {
        err = e;
      }
      expect(err, JSON.stringify(value)).toBeInstanceOf(SableError);
      expect((err as SableError).code).toBe('invalid_configuration');
      expect((err as Error).message).toMatch(/^SABLE_MASTER_KEY must be 64 hex characters or the base64 of 32 bytes/);
      if (value.length > 8) expect((err as Error).message).not.toContain(value);
    }
    expect(parseMasterKey('x')).toBeUndefined();
  });

  it('without a config value: creates master.key 0600 on first use and reuses it', () => {
    const first = loadMasterKey(join(dir, 'nested'), undefined);
    const file = join(dir, 'nested', 'master.key');
    expect(first.length).toBe(32);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(loadMasterKey(join(dir, 'nested'), undefined)).toEqual(first);
    expect(parseMasterKey(readFileSync(file, 'utf8'))).toEqual(first);
    expect(loadMasterKey(dir, undefined)).not.toEqual(first);
  });

  it('a corrupt key file is a startup error naming the file', () => {
    writeFileSync(join(dir, 'master.key'), 'not a key\n');
    expect(() => loadMasterKey(dir, undefined)).toThrow(SableError);
    expect(() => loadMasterKey(dir, undefined)).toThrow(/master\.key does not hold a master key/);
  });
});

describe('SecretStore', () => {
  let dir: string;
  let store: ControlStore;
  let secrets: SecretStore;
  beforeEach(() => {
    dir = tempDir();
    store = new ControlStore(dir);
    secrets = new SecretStore(store, loadMasterKey(dir, undefined));
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('round trips, keeps created_at on replace, and stores no plaintext', async () => {
    const value = 'sk-live-' + randomBytes(16).toString('hex') + ' é ✓';
    const first = await secrets.put('org-a', 'emb:openai:api_key', value);
    expect(first.created).toBe(true);
    expect(first.record).toEqual({ secret_ref: 'emb:openai:api_key', created_at: expect.any(String), updated_at: first.record.created_at });
    expect(secrets.reveal('org-a', 'emb:openai:api_key')).toBe(value);

    const raw = secrets.db.getBinary(['org-a', 'emb:openai:api_key'])!;
    expect(raw.length).toBeGreaterThan(0);
    expect(Buffer.from(raw).includes(Buffer.from(value, 'utf8'))).toBe(false);
    expect(Buffer.from(raw).includes(Buffer.from('sk-live-'))).toBe(false);

    await new Promise((r) => setTimeout(r, 5));
    const second = await secrets.put('org-a', 'emb:openai:api_key', 'v2');
    expect(second.created).toBe(false);
    expect(second.record.created_at).toBe(first.record.created_at);
    expect(second.record.updated_at > first.record.updated_at).toBe(true);
    expect(secrets.reveal('org-a', 'emb:openai:api_key')).toBe('v2');
    // A fresh IV per write: the same value twice seals differently.
    await secrets.put('org-a', 'x', 'same');
    const a = secrets.db.get(['org-a', 'x'])!;
    await secrets.put('org-a', 'x', 'same');
    const b = secrets.db.get(['org-a', 'x'])!;
    expect(Buffer.from(a.iv, 'base64').length).toBe(12);
    expect(a.iv).not.toBe(b.iv);
    expect(a.ciphertext).not.toBe(b.ciphertext);
  });

  it('is scoped to the organization: lists, reveals and deletes only its own', async () => {
    await secrets.put('org-a', 'emb:openai:api_key', 'A');
    await secrets.put('org-a', 'emb:cohere:api_key', 'A2');
    await secrets.put('org-ab', 'emb:openai:api_key', 'AB');
    await secrets.put('org-b', 'emb:openai:api_key', 'B');
    expect(secrets.list('org-a').map((s) => s.secret_ref)).toEqual(['emb:cohere:api_key', 'emb:openai:api_key']);
    expect(secrets.list('org-ab').map((s) => s.secret_ref)).toEqual(['emb:openai:api_key']);
    expect(secrets.list('org-c')).toEqual([]);
    expect(secrets.reveal('org-b', 'emb:openai:api_key')).toBe('B');
    expect(secrets.reveal('org-c', 'emb:openai:api_key')).toBeUndefined();
    expect(await secrets.delete('org-c', 'emb:openai:api_key')).toBe(false);
    expect(await secrets.delete('org-a', 'emb:openai:api_key')).toBe(true);
    expect(await secrets.delete('org-a', 'emb:openai:api_key')).toBe(false);
    expect(secrets.reveal('org-a', 'emb:openai:api_key')).toBeUndefined();
    expect(secrets.reveal('org-b', 'emb:openai:api_key')).toBe('B');
  });

  it('binds org and ref: a record copied to another key, or altered, fails with a clear error', async () => {
    await secrets.put('org-a', 'emb:openai:api_key', 'A');
    const record = secrets.db.get(['org-a', 'emb:openai:api_key'])!;
    await store.write(() => {
      secrets.db.put(['org-b', 'emb:openai:api_key'], record);
      secrets.db.put(['org-a', 'emb:cohere:api_key'], record);
      const flipped = Buffer.from(record.ciphertext, 'base64');
      flipped[0] ^= 1;
      secrets.db.put(['org-a', 'tampered'], { ...record, ciphertext: flipped.toString('base64') });
    });
    for (const [org, ref] of [['org-b', 'emb:openai:api_key'], ['org-a', 'emb:cohere:api_key'], ['org-a', 'tampered']]) {
      expect(() => secrets.reveal(org, ref)).toThrow(SecretDecryptError);
      expect(() => secrets.reveal(org, ref)).toThrow(/does not decrypt: the stored record was altered or belongs to another organization or ref/);
    }
    expect(secrets.reveal('org-a', 'emb:openai:api_key')).toBe('A');
  });

  it('a wrong master key fails with a clear error, not garbage; the right one works after reopening', async () => {
    await secrets.put('org-a', 'k', 'the value');
    const wrong = new SecretStore(store, randomBytes(32));
    expect(() => wrong.reveal('org-a', 'k')).toThrow(SecretDecryptError);
    expect(() => wrong.reveal('org-a', 'k')).toThrow(/encrypted under a different master key/);
    expect(wrong.list('org-a').map((s) => s.secret_ref)).toEqual(['k']);

    await store.close();
    store = new ControlStore(dir);
    secrets = new SecretStore(store, loadMasterKey(dir, undefined));
    expect(secrets.reveal('org-a', 'k')).toBe('the value');
    expect(() => new SecretStore(store, randomBytes(16))).toThrow(/32 bytes/);
  });

  it('validates ref and value', async () => {
    for (const ref of ['', 'a'.repeat(257), 'has space', 'emb:openai:api_key?', 'é']) {
      await expect(secrets.put('org-a', ref, 'v'), JSON.stringify(ref)).rejects.toMatchObject({ code: 'invalid_request' });
    }
    await secrets.put('org-a', 'a'.repeat(256), 'v');
    await secrets.put('org-a', 'A-z_0.9:/x', 'v');
    await expect(secrets.put('org-a', 'r', '')).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(secrets.put('org-a', 'r', 'é'.repeat(32 * 1024 + 1))).rejects.toMatchObject({ code: 'invalid_request' });
    await secrets.put('org-a', 'r', 'x'.repeat(64 * 1024));
    expect(secrets.reveal('org-a', 'r')!.length).toBe(64 * 1024);
  });
});

for (const adapter of ADAPTERS) {
  describe.skipIf(adapterMissing(adapter))(`/org-secrets over ${adapter}`, () => {
    let dir: string;
    let store: ControlStore;
    let secrets: SecretStore;
    let server: HttpServer;
    let url: string;
    const bodies: string[] = [];
    const callers: Record<string, Caller> = {
      k1: { orgId: 'org-1', role: 'member', keyId: 'key-1' },
      k2: { orgId: 'org-2', role: 'admin', keyId: 'key-2' },
    };
    const valueA = 'sk-A-' + randomBytes(12).toString('hex');
    const valueB = 'sk-B-' + randomBytes(12).toString('hex');
    const logged = vi.spyOn(console, 'error');

    const call = async (method: string, path: string, key: string | null, body?: unknown) => {
      const res = await fetch(url + path, {
        method,
        headers: { ...(key ? { 'x-api-key': key } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      bodies.push(text);
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    };

    beforeAll(async () => {
      dir = tempDir();
      store = new ControlStore(dir);
      secrets = new SecretStore(store, loadMasterKey(dir, undefined));
      const router = new Router((req) => callers[req.headers['x-api-key'] ?? '']);
      router.add(...secretRoutes(secrets));
      server = createHttpServer(async (req) => (await router.handle(req)).response, { maxBodyBytes: 1024 * 1024, adapter: pickAdapter(adapter) });
      url = `http://127.0.0.1:${await server.listen('127.0.0.1', 0)}`;
    });
    afterAll(async () => {
      await server.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
      // The values were never in a response body nor logged.
      for (const text of [...bodies, ...logged.mock.calls.map((c) => c.map(String).join(' '))]) {
        expect(text).not.toContain(valueA);
        expect(text).not.toContain(valueB);
      }
    });

    it('201 on create, 200 on replace, URL-encoded refs, list', async () => {
      const created = await call('PUT', '/org-secrets/emb%3Aopenai%3Aapi_key', 'k1', { value: valueA });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({ secret_ref: 'emb:openai:api_key', created_at: expect.any(String), updated_at: expect.any(String) });
      const replaced = await call('POST', '/org-secrets/emb:openai:api_key', 'k1', { value: valueB });
      expect(replaced.status).toBe(200);
      expect(replaced.body.created_at).toBe(created.body.created_at);
      expect(secrets.reveal('org-1', 'emb:openai:api_key')).toBe(valueB);
      expect((await call('POST', '/org-secrets/team%2Fprod%2Fkey', 'k1', { value: valueA })).status).toBe(201);
      expect(secrets.reveal('org-1', 'team/prod/key')).toBe(valueA);

      const list = await call('GET', '/org-secrets', 'k1');
      expect(list.status).toBe(200);
      expect(list.body).toEqual({
        secrets: [
          { secret_ref: 'emb:openai:api_key', created_at: created.body.created_at, updated_at: replaced.body.updated_at },
          { secret_ref: 'team/prod/key', created_at: expect.any(String), updated_at: expect.any(String) },
        ],
      });
      expect(await call('GET', '/org-secrets', 'k2')).toEqual({ status: 200, body: { secrets: [] } });
      expect((await call('GET', '/org-secrets', null)).status).toBe(401);
      expect((await call('PUT', '/org-secrets/x', 'nope', { value: valueA })).status).toBe(401);
    });

    it('another org: not found; the same ref there is a separate secret', async () => {
      const gone = await call('DELETE', '/org-secrets/emb%3Aopenai%3Aapi_key', 'k2');
      expect(gone.status).toBe(404);
      expect(gone.body.error).toBe('not_found');
      expect((await call('PUT', '/org-secrets/emb%3Aopenai%3Aapi_key', 'k2', { value: valueA })).status).toBe(201);
      expect(secrets.reveal('org-2', 'emb:openai:api_key')).toBe(valueA);
      expect(secrets.reveal('org-1', 'emb:openai:api_key')).toBe(valueB);
    });

    it('delete answers 204, then 404', async () => {
      const del = await fetch(url + '/org-secrets/emb%3Aopenai%3Aapi_key', { method: 'DELETE', headers: { 'x-api-key': 'k1' } });
      expect(del.status).toBe(204);
      expect(await del.text()).toBe('');
      expect((await call('DELETE', '/org-secrets/emb%3Aopenai%3Aapi_key', 'k1')).body.error).toBe('not_found');
      expect(secrets.reveal('org-1', 'emb:openai:api_key')).toBeUndefined();
      expect(secrets.reveal('org-2', 'emb:openai:api_key')).toBe(valueA);
    });

    it('400 invalid_request on a bad ref or value', async () => {
      const bad: [string, unknown][] = [
        ['/org-secrets/has%20space', { value: valueA }],
        ['/org-secrets/' + 'a'.repeat(257), { value: valueA }],
        ['/org-secrets/%C3%A9', { value: valueA }],
        ['/org-secrets/ok', { value: '' }],
        ['/org-secrets/ok', { value: 42 }],
        ['/org-secrets/ok', {}],
        ['/org-secrets/ok', { value: 'x'.repeat(64 * 1024 + 1) }],
      ];
      for (const [path, body] of bad) {
        const r = await call('PUT', path, 'k1', body);
        expect(r.status, path.slice(0, 40)).toBe(400);
        expect(r.body.error).toBe('invalid_request');
      }
      expect((await call('DELETE', '/org-secrets/has%20space', 'k1')).status).toBe(400);
      expect(secrets.list('org-1').map((s) => s.secret_ref)).toEqual(['team/prod/key']);
    });
  });
}
