/**
 * The pages' one way to the service: the typed client (client/) with the tab's API key, the same
 * client on the session token for the dashboard routes, and failures turned into what a page
 * shows: the service's own message, its code and the request's id.
 */
import { SableApiError, SableClient, type CreateDataset, type Dataset, type DatasetList, type SearchAnswer, type SearchRequest, type Sla, type Stats } from '../../client/index.js';
import type { Role, Session } from './session.js';

/** GET /datasets/{id}/index (the client names no type for it). */
export interface IndexStatus {
  index_type: string;
  status: 'empty' | 'building' | 'ready';
  progress: number;
  partitions: number;
  built_at: string | null;
}

/** GET /datasets/{id}/hybrid. */
export interface Hybrid {
  enabled: boolean;
  alpha: number;
}

export interface SchemaField {
  name: string;
  type: string;
}

/** A failure as a page shows it. */
export interface Problem {
  message: string;
  code: string | null;
  requestId: string | null;
}

export function problemOf(e: unknown): Problem {
  if (e instanceof SableApiError) return { message: e.body.message || e.message, code: e.code, requestId: e.requestId };
  // fetch rejects with a TypeError when no answer came at all.
  if (e instanceof TypeError) return { message: `the service did not answer: ${e.message}`, code: null, requestId: null };
  return { message: e instanceof Error ? e.message : String(e), code: null, requestId: null };
}

/** A session token is renewed this long before it expires. */
const RENEW_BEFORE_MS = 60_000;

export class Api {
  /** The API routes, with the key. */
  readonly sable: SableClient;
  /** The dashboard routes (source previews), with the session token instead of the key. */
  readonly dashboard: SableClient;

  constructor(
    private session: Session,
    private readonly renewed: (s: Session) => void,
  ) {
    this.sable = new SableClient({ baseUrl: location.origin, apiKey: session.apiKey });
    this.dashboard = new SableClient({ baseUrl: location.origin, apiKey: '', fetch: bearerFetch(() => this.token()) });
  }

  /**
   * Signs out at the service: DELETE /auth/sessions ends the token (the one in use, renewed or
   * not), which is refused from then on, also where a copy of it went. An expired one needs no ending.
   */
  async endSession(): Promise<void> {
    if (Date.parse(this.session.expiresAt) <= Date.now()) return;
    const client = new SableClient({ baseUrl: location.origin, apiKey: '', retries: 1, fetch: bearerFetch(async () => this.session.token) });
    await client.call('DELETE', '/auth/sessions');
  }

  listDatasets(limit: number, offset: number): Promise<DatasetList> {
    return this.sable.listDatasets({ limit, offset });
  }
  getDataset(id: string): Promise<Dataset> {
    return this.sable.getDataset(id);
  }
  /** Creates the dataset and waits for its engine, so it can be written and searched at once. */
  async createDataset(body: CreateDataset): Promise<Dataset> {
    const created = await this.sable.createDataset(body);
    return this.sable.ensureEngine(created.id);
  }
  deleteDataset(id: string): Promise<void> {
    return this.sable.deleteDataset(id);
  }
  stats(id: string): Promise<Stats> {
    return this.sable.stats(id);
  }
  index(id: string): Promise<IndexStatus> {
    return this.sable.call('GET', `/datasets/${enc(id)}/index`);
  }
  hybrid(id: string): Promise<Hybrid> {
    return this.sable.call('GET', `/datasets/${enc(id)}/hybrid`);
  }
  sla(id: string): Promise<Sla> {
    return this.sable.call('GET', `/datasets/${enc(id)}/sla`);
  }
  /** Admin only: declares fields, merged into the schema. */
  declareFields(id: string, schema: SchemaField[]): Promise<{ schema: unknown[]; schema_version: number }> {
    return this.sable.call('PATCH', `/datasets/${enc(id)}/schema`, { body: { schema, mode: 'merge' } });
  }
  search(id: string, body: SearchRequest): Promise<SearchAnswer> {
    return this.sable.search(id, body);
  }

  /** The session token, renewed with the key when it is about to expire (they last an hour). */
  private async token(): Promise<string> {
    if (Date.parse(this.session.expiresAt) - Date.now() > RENEW_BEFORE_MS) return this.session.token;
    const fresh = await openSession(this.sable);
    this.session = { ...this.session, token: fresh.token, expiresAt: fresh.expires_at };
    this.renewed(this.session);
    return fresh.token;
  }
}

/** Opens a dashboard session with the key (which checks it): the token, and the key's role and organization. */
export async function signIn(apiKey: string): Promise<Session> {
  const opened = await openSession(new SableClient({ baseUrl: location.origin, apiKey, retries: 0 }));
  return { apiKey, token: opened.token, expiresAt: opened.expires_at, role: opened.role, orgId: opened.org_id };
}

/** The window's fetch with `Authorization: Bearer <token>` in place of the key. */
function bearerFetch(token: () => Promise<string>): typeof fetch {
  return async (input, init) => {
    const headers = new Headers(init?.headers);
    headers.delete('x-api-key');
    headers.set('authorization', `Bearer ${await token()}`);
    return fetch(input, { ...init, headers });
  };
}

interface OpenedSession {
  token: string;
  expires_at: string;
  role: Role;
  org_id: string;
}

function openSession(client: SableClient): Promise<OpenedSession> {
  return client.call('POST', '/auth/sessions');
}

const enc = encodeURIComponent;
