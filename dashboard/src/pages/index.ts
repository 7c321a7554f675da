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
import { SearchPage } from './search.js';

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
  { path: '/ask', title: 'Ask', nav: 'Ask', view: AskPage },
  { path: '/ask/:id', title: 'Ask', view: AskPage },
  { path: '/connections', title: 'Connections', nav: 'Connections', view: ConnectionsPage },
];
