import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { describeProblem, type ApiProblem } from "./api.js";
import { InputError } from "./format.js";

const problemOf = (err: unknown): ApiProblem => (err instanceof InputError ? { code: "input", message: err.message } : describeProblem(err));

export interface Loaded<T> {
  data: T | undefined;
  problem: ApiProblem | null;
  loading: boolean;
  reload(): void;
}

/** Loads data when `deps` change; the answer of an outdated load is dropped. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data: T | undefined; problem: ApiProblem | null; loading: boolean }>({ data: undefined, problem: null, loading: true });
  const [round, setRound] = useState(0);
  const latest = useRef(0);
  useEffect(() => {
    const mine = ++latest.current;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => mine === latest.current && setState({ data, problem: null, loading: false }),
      (err: unknown) => mine === latest.current && setState({ data: undefined, problem: problemOf(err), loading: false }),
    );
  }, [...deps, round]);
  const reload = useCallback(() => setRound((r) => r + 1), []);
  return { ...state, reload };
}

export interface Action {
  busy: boolean;
  problem: ApiProblem | null;
  /** Runs fn unless one is running; its failure is kept in `problem`. Resolves with fn's result, or undefined on failure. */
  run<T>(fn: () => Promise<T>): Promise<T | undefined>;
}

/** A user action (a form's submit, a button): busy while it runs, its failure shown next to it. */
export function useAction(): Action {
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<ApiProblem | null>(null);
  const running = useRef(false);
  const run = useCallback(async <T,>(fn: () => Promise<T>) => {
    if (running.current) return undefined;
    running.current = true;
    setBusy(true);
    setProblem(null);
    try {
      return await fn();
    } catch (err) {
      setProblem(problemOf(err));
      return undefined;
    } finally {
      running.current = false;
      setBusy(false);
    }
  }, []);
  return { busy, problem, run };
}
