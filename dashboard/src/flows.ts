/**
 * What the list pages do the same way around their lists: a create form opened by a New … button
 * (a creation closes it, says so in the page's status notice and reads the list again), and a
 * delete that asks first (a dialog busy while the call is out, the service's refusal shown in it,
 * and what a page does once the item is gone).
 */
import { useState } from 'preact/hooks';
import { problemOf, type Problem } from './api.js';

export interface CreateForm {
  /** The form is shown (the New … button is not). */
  open: boolean;
  start: () => void;
  cancel: () => void;
  /** The form's onCreated: closes it, says "Created <name>." and reads the list again. */
  created: (item: { name: string }) => void;
  /** The page's status notice (what it last created or deleted), and its setter. */
  notice: string;
  say: (notice: string) => void;
}

/** A list page's create form and its status notice; `reload` reads the list again. */
export function useCreateForm(reload: () => void): CreateForm {
  const [open, setOpen] = useState(false);
  const [notice, say] = useState('');
  return {
    open,
    start: () => (setOpen(true), say('')),
    cancel: () => setOpen(false),
    created: (item) => {
      setOpen(false);
      say(`Created ${item.name}.`);
      reload();
    },
    notice,
    say,
  };
}

export interface ConfirmedDelete<T> {
  /** What the dialog asks about; null while no dialog is open. */
  target: T | null;
  /** Opens the dialog about `target`. */
  ask: (target: T) => void;
  /** The props ConfirmDialog takes from the flow. */
  dialog: { busy: boolean; problem: Problem | null; onConfirm: () => void; onCancel: () => void };
}

/**
 * A delete (or a revoke) after a confirmation dialog. `remove` makes the call, told the service's
 * refusal of the try before (a page may answer it, as a forced delete); once it succeeds the
 * dialog closes and `removed` says so (a notice and a reload, or another page). A refusal stays
 * in the dialog, which may be confirmed again.
 */
export function useConfirmedDelete<T>(remove: (target: T, refused: Problem | null) => Promise<unknown>, removed?: (target: T) => void): ConfirmedDelete<T> {
  const [target, setTarget] = useState<T | null>(null);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const onConfirm = async () => {
    const t = target!;
    setBusy(true);
    setProblem(null);
    try {
      await remove(t, problem);
      setTarget(null);
      removed?.(t);
    } catch (e) {
      setProblem(problemOf(e));
    }
    setBusy(false);
  };
  return {
    target,
    ask: (t) => (setProblem(null), setTarget(t)),
    dialog: { busy, problem, onConfirm, onCancel: () => setTarget(null) },
  };
}
