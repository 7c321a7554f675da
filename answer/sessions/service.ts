/** Session use-cases, scoped to the caller's organization (another's session is not found). */
import type { DatasetService } from '../../catalog/datasets/service.js';
import { SableError } from '../../errors/codes.js';
import type { MessageCreate, SessionCreate } from '../requests.js';
import type { MessageRecord, SessionRecord, SessionStore } from './store.js';

export class SessionService {
  constructor(
    private readonly store: SessionStore,
    private readonly datasets: DatasetService,
  ) {}

  find(orgId: string, id: string): SessionRecord {
    const s = this.store.get(orgId, id);
    if (!s) throw new SableError('session_not_found', `session ${id} was not found`);
    return s;
  }

  async create(orgId: string, b: SessionCreate) {
    // The default scope must be a dataset the organization has.
    if (b.dataset_id !== undefined) this.datasets.get(orgId, b.dataset_id);
    const s = await this.store.create(orgId, { title: b.title ?? null, workspace_id: b.workspace_id ?? null, dataset_id: b.dataset_id ?? null, metadata: b.metadata ?? {} });
    return publicSession(s);
  }

  list(orgId: string, limit: number) {
    return { sessions: this.store.list(orgId, limit).map(publicSession) };
  }

  get(orgId: string, id: string) {
    return publicSession(this.find(orgId, id));
  }

  async remove(orgId: string, id: string): Promise<void> {
    if (!(await this.store.remove(orgId, id))) throw new SableError('session_not_found', `session ${id} was not found`);
  }

  async addMessage(orgId: string, id: string, b: MessageCreate): Promise<MessageRecord> {
    this.find(orgId, id);
    const stored = await this.store.append(orgId, id, [{ role: b.role, content: b.content, metadata: b.metadata ?? {} }]);
    if (!stored) throw new SableError('session_not_found', `session ${id} was not found`);
    return stored[0];
  }

  messages(orgId: string, id: string, limit: number) {
    this.find(orgId, id);
    return { messages: this.store.messagesOf(id, limit) };
  }

  events(orgId: string, id: string, limit: number) {
    this.find(orgId, id);
    return { events: this.store.eventsOf(id, limit) };
  }
}

export function publicSession(s: SessionRecord) {
  const { org_id: _org, ...shown } = s;
  return shown;
}
