import { useState } from "preact/hooks";
import { api } from "../api.js";
import { Form, TextField } from "../components/fields.js";
import { Pager, usePages } from "../components/pager.js";
import { Loading, Problem } from "../components/problem.js";
import { isoFromLocal, when } from "../format.js";
import { href } from "../router.js";
import { useLoad } from "../use-call.js";
import { ListTable } from "../components/list-table.js";

interface Filters {
  container: string;
  createdAfter: string;
  createdBefore: string;
}

const none: Filters = { container: "", createdAfter: "", createdBefore: "" };

export function TracesPage() {
  const [draft, setDraft] = useState(none);
  const [filters, setFilters] = useState(none);
  const pages = usePages();
  const list = useLoad(
    () =>
      api.recall.listRecallTraces({
        container: filters.container.trim(),
        createdAfter: isoFromLocal(filters.createdAfter),
        createdBefore: isoFromLocal(filters.createdBefore),
        pageSize: 20,
        pageToken: pages.token,
      }),
    [filters, pages.token],
  );
  const set = (patch: Partial<Filters>) => setDraft({ ...draft, ...patch });
  return (
    <section aria-labelledby="traces-title">
      <h1 id="traces-title">Recall traces</h1>
      <Form
        label="Filter traces"
        onSubmit={() => {
          pages.reset();
          setFilters(draft);
        }}
      >
        <TextField label="Container" value={draft.container} onInput={(container) => set({ container })} />
        <TextField label="Created after" type="datetime-local" value={draft.createdAfter} onInput={(createdAfter) => set({ createdAfter })} />
        <TextField label="Created before" type="datetime-local" value={draft.createdBefore} onInput={(createdBefore) => set({ createdBefore })} />
        <div class="actions">
          <button type="submit">Apply filters</button>
        </div>
      </Form>
      <Problem problem={list.problem} />
      <Loading when={list.loading && !list.data} />
      {list.data && (
        <>
          <ListTable label="Traces" columns={["When", "Query", "Containers", "Returned", "Candidates"]}>
            {list.data.traces.map((t) => (
              <tr key={t.traceId}>
                <td class="nowrap">
                  <a href={href("traces", t.traceId)}>{when(t.createdAt)}</a>
                </td>
                <td class="content-cell">{t.query}</td>
                <td>{t.containers.join(", ") || "whole workspace"}</td>
                <td>{t.returnedIds.length}</td>
                <td data-testid="trace-candidates">{t.receipt?.candidatesConsidered ?? "—"}</td>
              </tr>
            ))}
          </ListTable>
          {list.data.traces.length === 0 && <p class="muted">No traces.</p>}
          <Pager pages={pages} nextToken={list.data.nextPageToken} label="Traces" />
        </>
      )}
    </section>
  );
}
