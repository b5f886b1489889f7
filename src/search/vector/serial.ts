/** Runs a task after every task given before it has settled. */
export type SerialQueue = <T>(task: () => Promise<T>) => Promise<T>;

/** Runs tasks one at a time in call order, so writes from this process land in the order they were made. */
export function serialQueue(): SerialQueue {
  let tail: Promise<unknown> = Promise.resolve();
  return (task) => {
    const run = tail.then(task, task);
    tail = run.catch(() => undefined);
    return run;
  };
}
