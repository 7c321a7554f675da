/**
 * The dashboard's pages: a page is a file of its own in this folder and one line here (its hash
 * path, its title, and its nav label when it has a place in the nav). The first match wins.
 */
import type { FunctionComponent } from 'preact';
import type { Api } from '../api.js';
import type { Session } from '../session.js';
import { AskPage } from './ask.js';
import { ConnectionsPage } from './connections.js';
import { DatasetPage } from './dataset.js';
import { DatasetsPage } from './datasets.js';
import { DocumentsPage } from './documents.js';
import { JobPage } from './job.js';
import { JobsPage } from './jobs.js';
import { SchedulesPage } from './schedules.js';
import { SearchPage } from './search.js';
import { SourcePage } from './source.js';
import { SourcesPage } from './sources.js';
import { UploadPage } from './upload.js';

export interface PageProps {
  params: Record<string, string>;
  api: Api;
  session: Session;
}

export interface Page {
  path: string;
  title: string;
  /** The label of its link in the nav; pages reached from other pages have none. */
  nav?: string;
  view: FunctionComponent<PageProps>;
}

export const PAGES: Page[] = [
  { path: '/datasets', title: 'Datasets', nav: 'Datasets', view: DatasetsPage },
  { path: '/datasets/:id', title: 'Dataset', view: DatasetPage },
  { path: '/search', title: 'Search', nav: 'Search', view: SearchPage },
  { path: '/search/:id', title: 'Search', view: SearchPage },
  { path: '/ingestion', title: 'Sources', nav: 'Ingestion', view: SourcesPage },
  { path: '/ingestion/sources/:id', title: 'Source', view: SourcePage },
  { path: '/ingestion/upload', title: 'Upload', view: UploadPage },
  { path: '/ingestion/upload/:id', title: 'Upload', view: UploadPage },
  { path: '/ingestion/jobs', title: 'Jobs', view: JobsPage },
  { path: '/ingestion/jobs/:id', title: 'Job', view: JobPage },
  { path: '/ingestion/schedules', title: 'Schedules', view: SchedulesPage },
  { path: '/ingestion/documents', title: 'Documents', view: DocumentsPage },
  { path: '/ingestion/documents/:id', title: 'Documents', view: DocumentsPage },
  { path: '/ask', title: 'Ask', nav: 'Ask', view: AskPage },
  { path: '/ask/:id', title: 'Ask', view: AskPage },
  { path: '/connections', title: 'Connections', nav: 'Connections', view: ConnectionsPage },
];
