/**
 * A modal question (the native <dialog>: it keeps focus inside, Escape cancels, focus returns to
 * the button that opened it when it closes), with the service's refusal of the last answer to it.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import type { Problem } from '../api.js';
import { ProblemNote } from './problem-note.js';

interface Props {
  title: string;
  confirmLabel: string;
  busy: boolean;
  /** Shown after the question (a delete the service refused). */
  problem?: Problem | null;
  onConfirm: () => void;
  onCancel: () => void;
  children: ComponentChildren;
}

export function ConfirmDialog({ title, confirmLabel, busy, problem = null, onConfirm, onCancel, children }: Props) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    dialog.current?.showModal();
  }, []);
  return (
    <dialog ref={dialog} aria-labelledby="confirm-title" onCancel={(e) => (e.preventDefault(), busy || onCancel())}>
      <h2 id="confirm-title">{title}</h2>
      {children}
      <ProblemNote problem={problem} />
      <div class="actions">
        <button type="button" onClick={onCancel} disabled={busy} autofocus>
          Cancel
        </button>
        <button type="button" class="danger" onClick={onConfirm} disabled={busy}>
          {busy ? 'Working…' : confirmLabel}
        </button>
      </div>
    </dialog>
  );
}
