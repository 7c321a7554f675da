/**
 * What the pages show of what they read while it is read. A list: the service's refusal, then
 * "Loading …" until the first answer, the page's words for an empty list, or the list (a reload
 * keeps it on screen). A page of one item (a dataset, a source, a job) before the item came: its
 * title, and the refusal or "Loading…".
 */
import type { ComponentChildren } from 'preact';
import type { Problem } from '../api.js';
import type { Loaded } from '../hooks.js';
import { ProblemNote } from './problem-note.js';

interface Props<T> {
  list: Loaded<T>;
  /** A refusal of an action on the page, shown in place of the list's own. */
  problem?: Problem | null;
  /** What is shown until the first answer (nothing when left out). */
  loading?: string;
  isEmpty: (data: T) => boolean;
  /** What is shown when the list is empty. */
  empty: ComponentChildren;
  children: (data: T) => ComponentChildren;
}

export function Listing<T>({ list, problem, loading, isEmpty, empty, children }: Props<T>) {
  return (
    <>
      <ProblemNote problem={problem ?? list.problem} />
      {list.data === null ? list.loading && loading && <p class="muted">{loading}</p> : isEmpty(list.data) ? empty : children(list.data)}
    </>
  );
}

/** A page of one item until the item came; `children` stand under the title (the section's tabs). */
export function PageLoading({ title, read, children }: { title: string; read: Loaded<unknown>; children?: ComponentChildren }) {
  return (
    <>
      <h1 tabIndex={-1}>{title}</h1>
      {children}
      <ProblemNote problem={read.problem} />
      {read.loading && <p class="muted">Loading…</p>}
    </>
  );
}
