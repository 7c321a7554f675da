/**
 * A source's config as the service answers it: every field with its value, secret fields as the
 * service masks them (********: the page never has the secret itself).
 */
import { MASK } from '../ingestion.js';

export function SourceConfig({ config, compact }: { config: Record<string, unknown>; compact?: boolean }) {
  const entries = Object.entries(config);
  if (entries.length === 0) return <span class="muted">no settings</span>;
  return (
    <dl class={compact ? 'config compact' : 'config'}>
      {entries.map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>{v === MASK ? <span class="masked" title="secret: stored encrypted, never shown">{MASK}</span> : <code>{shown(v)}</code>}</dd>
        </div>
      ))}
    </dl>
  );
}

function shown(v: unknown): string {
  if (typeof v === 'string') return v;
  if (Array.isArray(v) && v.every((x) => typeof x === 'string' || typeof x === 'number')) return v.length ? v.join(', ') : '[]';
  return JSON.stringify(v);
}
