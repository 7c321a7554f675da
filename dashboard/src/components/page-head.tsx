/**
 * The top of a page: its title (the h1 the shell focuses when the page opens) with what acts on the
 * whole page beside it (a New … button, a link, a note), and the status notice under it that says
 * what the page last did (created, deleted, downloaded), read out as it changes.
 */
import type { ComponentChildren } from 'preact';
import type { CreateForm } from '../flows.js';

export function PageHead({ title, children }: { title: ComponentChildren; children?: ComponentChildren }) {
  return (
    <div class="page-head">
      <h1 tabIndex={-1}>{title}</h1>
      {children}
    </div>
  );
}

/** The button that opens a list page's create form, hidden while the form is open. */
export function NewButton({ form, children }: { form: CreateForm; children: ComponentChildren }) {
  if (form.open) return null;
  return (
    <button type="button" class="primary" onClick={form.start}>
      {children}
    </button>
  );
}

export function Notice({ text }: { text: string }) {
  return (
    <p class="notice" role="status">
      {text}
    </p>
  );
}
