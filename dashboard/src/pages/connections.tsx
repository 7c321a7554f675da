/**
 * Connections: the organization's stored OAuth grants (Google for gdrive and gcs sources,
 * Atlassian for jira and confluence), with status, account and errors. Creating one answers the
 * provider's consent page, shown as a link that opens in a new tab; the list is read again every
 * two seconds while a connection is pending, so it turns `connected` (or `error`, with the
 * reason) once the person approves (or refuses) there. Revoking asks first, then revokes the
 * grant at the provider and deletes the connection.
 */
import { useState } from 'preact/hooks';
import { problemOf, type Problem } from '../api.js';
import { ConfirmDialog } from '../components/confirm-dialog.js';
import { DataTable } from '../components/data-table.js';
import { Listing } from '../components/listing.js';
import { Notice } from '../components/page-head.js';
import { ProblemNote } from '../components/problem-note.js';
import '../connections.css';
import { useConfirmedDelete } from '../flows.js';
import { when } from '../format.js';
import { useInterval, useLoad } from '../hooks.js';
import type { PageProps } from './index.js';

/** GET /connections/{id} (the client names no type for it). */
interface Connection {
  id: string;
  provider: Provider;
  source_type: string | null;
  status: 'pending' | 'connected' | 'error' | 'revoked';
  account_email: string | null;
  error: string | null;
  scopes: string[];
  created_at: string;
  updated_at: string;
}
type Created = Connection & { authorization_url: string };

type Provider = 'google' | 'atlassian';
const PROVIDERS: Record<Provider, { label: string; types: string[] }> = {
  google: { label: 'Google', types: ['gdrive', 'gcs'] },
  atlassian: { label: 'Atlassian', types: ['jira', 'confluence'] },
};
const POLL_MS = 2000;

export function ConnectionsPage({ api }: PageProps) {
  const list = useLoad(() => api.sable.call<{ connections: Connection[] }>('GET', '/connections'), [api]);
  const [created, setCreated] = useState<Created | null>(null);
  const [notice, setNotice] = useState('');
  const connections = list.data?.connections ?? [];
  useInterval(list.reload, connections.some((c) => c.status === 'pending') ? POLL_MS : null);
  const revoke = useConfirmedDelete<Connection>(
    (c) => api.sable.call('DELETE', `/connections/${encodeURIComponent(c.id)}`),
    (c) => {
      setNotice(`Revoked the ${PROVIDERS[c.provider].label} connection${c.account_email ? ` of ${c.account_email}` : ''}: the grant is revoked at the provider and the connection deleted.`);
      if (created?.id === c.id) setCreated(null);
      list.reload();
    },
  );

  // The connection just created, as the list now has it.
  const latest = created && connections.find((c) => c.id === created.id);

  return (
    <>
      <h1 tabIndex={-1}>Connections</h1>
      <p class="muted">
        A connection stores an OAuth grant once; <code>gdrive</code>, <code>gcs</code>, <code>jira</code> and <code>confluence</code> sources use it by
        its id (<code>connection_id</code>). Tokens never leave the service.
      </p>
      <Notice text={notice} />
      <CreateForm
        api={api}
        onCreated={(c) => {
          setNotice('');
          setCreated(c);
          list.reload();
        }}
      />
      {created && (
        <div class="card consent" role="region" aria-label="Consent">
          <h2>Approve access</h2>
          {latest?.status === 'connected' ? (
            <p>
              Connected{latest.account_email && <> as {latest.account_email}</>}. Sources can use it as <code>connection_id</code> <code>{created.id}</code>.
            </p>
          ) : latest?.status === 'error' ? (
            <p class="problem-inline">Not connected: {latest.error}</p>
          ) : (
            <>
              <p>
                <a href={created.authorization_url} target="_blank" rel="noopener noreferrer">
                  Open {PROVIDERS[created.provider].label}'s consent page
                </a>{' '}
                (a new tab), sign in and approve. The provider sends that tab back to the service, and this page shows the connection connected.
                The link is good for 15 minutes.
              </p>
              <p class="muted small">Waiting for the consent…</p>
            </>
          )}
        </div>
      )}
      <h2>Connections</h2>
      <Listing list={list} loading="Loading connections…" isEmpty={(d) => d.connections.length === 0} empty={<p>No connections yet.</p>}>
        {(data) => (
          <DataTable label="Connections list" columns={['Provider', 'For', 'Status', 'Account', 'Created', 'Id']} hidden="Actions">
            {data.connections.map((c) => (
              <tr key={c.id}>
                <th scope="row">{PROVIDERS[c.provider]?.label ?? c.provider}</th>
                <td>{c.source_type ?? <span class="muted">every type</span>}</td>
                <td class="wrap">
                  <span class={`tag ${c.status === 'connected' ? 'ok' : c.status === 'pending' ? 'warn' : 'bad'}`}>{c.status}</span>
                  {c.error && <span class="problem-inline">{c.error}</span>}
                </td>
                <td>{c.account_email ?? <span class="muted">—</span>}</td>
                <td>{when(c.created_at)}</td>
                <td>
                  <code title={c.id}>{c.id.slice(0, 8)}</code>
                </td>
                <td class="row-actions">
                  <button
                    type="button"
                    class="link danger"
                    aria-label={`Revoke ${PROVIDERS[c.provider]?.label ?? c.provider} connection${c.account_email ? ` of ${c.account_email}` : ''}`}
                    onClick={() => revoke.ask(c)}
                  >
                    Revoke
                  </button>
                </td>
              </tr>
            ))}
          </DataTable>
        )}
      </Listing>
      {revoke.target && (
        <ConfirmDialog title={`Revoke the ${PROVIDERS[revoke.target.provider]?.label ?? revoke.target.provider} connection?`} confirmLabel="Revoke connection" {...revoke.dialog}>
          <p>
            The grant{revoke.target.account_email && <> of {revoke.target.account_email}</>} is revoked at the provider and the connection deleted. Sources
            that use it fail their next run. This cannot be undone.
          </p>
        </ConfirmDialog>
      )}
    </>
  );
}

function CreateForm({ api, onCreated }: { api: PageProps['api']; onCreated: (c: Created) => void }) {
  const [provider, setProvider] = useState<Provider>('google');
  const [sourceType, setSourceType] = useState('');
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setProblem(null);
    try {
      onCreated(await api.sable.call<Created>('POST', '/connections', { body: { provider, ...(sourceType ? { source_type: sourceType } : {}) } }));
    } catch (err) {
      setProblem(problemOf(err));
    }
    setBusy(false);
  };

  return (
    <form class="card" onSubmit={submit} aria-label="New connection">
      <h2>New connection</h2>
      <div class="options">
        <div class="field">
          <label for="conn-provider">Provider</label>
          <select id="conn-provider" value={provider} onChange={(e) => (setProvider(e.currentTarget.value as Provider), setSourceType(''))}>
            {Object.entries(PROVIDERS).map(([id, p]) => (
              <option key={id} value={id}>
                {p.label}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="conn-type">Source type</label>
          <select id="conn-type" value={sourceType} onChange={(e) => setSourceType(e.currentTarget.value)}>
            <option value="">every type</option>
            {PROVIDERS[provider].types.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </div>
      </div>
      <p class="muted small">The type selects the OAuth scopes asked for. The service needs the provider's OAuth client (SABLE_GOOGLE_CLIENT_ID, SABLE_ATLASSIAN_CLIENT_ID…).</p>
      <ProblemNote problem={problem} />
      <button type="submit" class="primary" disabled={busy}>
        {busy ? 'Creating…' : 'Create connection'}
      </button>
    </form>
  );
}
