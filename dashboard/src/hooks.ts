/** Hooks of the pages: data read from the service (what came, what failed, read it again) and polling. */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { problemOf, type Problem } from './api.js';

export interface Loaded<T> {
  data: T | null;
  problem: Problem | null;
  loading: boolean;
  reload: () => void;
}

/** Calls `load` now and whenever `deps` change; a reload keeps the last data on screen until the new one comes. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data: T | null; problem: Problem | null; loading: boolean }>({ data: null, problem: null, loading: true });
  const generation = useRef(0);
  const run = useCallback(() => {
    const mine = ++generation.current;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => mine === generation.current && setState({ data, problem: null, loading: false }),
      (e) => mine === generation.current && setState((s) => ({ data: s.data, problem: problemOf(e), loading: false })),
    );
  }, deps);
  useEffect(() => {
    run();
    // An answer that comes after the page has gone is dropped.
    return () => void generation.current++;
  }, [run]);
  return { ...state, reload: run };
}

/** Calls `tick` every `ms` while `ms` is not null. */
export function useInterval(tick: () => void, ms: number | null): void {
  const latest = useRef(tick);
  latest.current = tick;
  useEffect(() => {
    if (ms === null) return;
    const timer = setInterval(() => latest.current(), ms);
    return () => clearInterval(timer);
  }, [ms]);
}
