/**
 * The Ingestion pages' own links (sources, upload, jobs, schedules, documents): the main nav has one
 * Ingestion entry, these lead between its pages. The current one is marked for screen readers too.
 */
import '../ingestion.css';

const TABS = [
  { path: '/ingestion', label: 'Sources' },
  { path: '/ingestion/upload', label: 'Upload' },
  { path: '/ingestion/jobs', label: 'Jobs' },
  { path: '/ingestion/schedules', label: 'Schedules' },
  { path: '/ingestion/documents', label: 'Documents' },
];

export function IngestionTabs({ current }: { current: 'Sources' | 'Upload' | 'Jobs' | 'Schedules' | 'Documents' }) {
  return (
    <nav class="tabs" aria-label="Ingestion">
      <ul>
        {TABS.map((t) => (
          <li key={t.path}>
            <a href={'#' + t.path} aria-current={t.label === current ? 'page' : undefined}>
              {t.label}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}
