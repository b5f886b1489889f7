import type { PagedIds } from "../../src/search/reconcile.js";

/** Every id in an index, read page by page as reconciliation reads them. */
export async function indexedIds(index: Pick<PagedIds, "eachIdPage">): Promise<Set<string>> {
  const ids = new Set<string>();
  await index.eachIdPage(1000, async (page) => {
    for (const id of page) ids.add(id);
  });
  return ids;
}
