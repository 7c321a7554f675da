/**
 * A list's table: in a region that scrolls sideways on its own in a narrow window (named, and
 * focusable so a keyboard scrolls it), its column heads, then the rows the page gives. `hidden`
 * heads a last column for screen readers only (the rows' actions).
 */
import type { ComponentChildren } from 'preact';

interface Props {
  /** The region's name. */
  label: string;
  class?: string;
  columns: string[];
  hidden?: string;
  children: ComponentChildren;
}

export function DataTable({ label, class: className, columns, hidden, children }: Props) {
  return (
    <div class="table-wrap" tabIndex={0} role="region" aria-label={label}>
      <table class={className}>
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c} scope="col">
                {c}
              </th>
            ))}
            {hidden && (
              <th scope="col">
                <span class="visually-hidden">{hidden}</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
