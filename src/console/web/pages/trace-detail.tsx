import { api } from "../api.js";
import { Loading, Problem } from "../components/problem.js";
import { num, pretty, when } from "../format.js";
import { href } from "../router.js";
import { useLoad } from "../use-call.js";
import { ListTable } from "../components/list-table.js";

export function TraceDetailPage({ id }: { id: string }) {
  const trace = useLoad(() => api.recall.getRecallTrace({ traceId: id }), [id]);
  const t = trace.data;
  const outcomes = new Map<string, number>();
  for (const c of t?.candidates ?? []) outcomes.set(c.outcome, (outcomes.get(c.outcome) ?? 0) + 1);
  return (
    <section aria-labelledby="trace-title">
      <p>
        <a href={href("traces")}>← Traces</a>
      </p>
      <h1 id="trace-title">Trace {id}</h1>
      <Problem problem={trace.problem} />
      <Loading when={trace.loading && !t} />
      {t && (
        <>
          <dl class="facts">
            <dt>Query</dt>
            <dd class="memory-content">{t.query}</dd>
            <dt>When</dt>
            <dd>{when(t.createdAt)}</dd>
            <dt>Key</dt>
            <dd>{t.keyId}</dd>
            <dt>Containers</dt>
            <dd>{t.containers.join(", ") || "whole workspace"}</dd>
            <dt>Mode</dt>
            <dd>{t.receipt?.searchMode}</dd>
            <dt>Returned</dt>
            <dd data-testid="trace-returned">
              {t.returnedIds.length} of {t.candidates.length} candidates
            </dd>
            <dt>Tokens</dt>
            <dd>{t.meta?.tokens ?? 0}</dd>
            <dt>Timings</dt>
            <dd>
              embed {num(t.embedMs, 1)} ms · search {num(t.meta?.searchMs ?? 0, 1)} ms · total {num(t.meta?.totalMs ?? 0, 1)} ms
            </dd>
            <dt>Outcomes</dt>
            <dd>
              {[...outcomes]
                .sort()
                .map(([o, n]) => `${o} ${n}`)
                .join(" · ")}
            </dd>
          </dl>
          <h2>Candidates</h2>
          <ListTable label="Candidates" columns={["Memory", "Cosine", "BM25", "Final score", "Via", "Outcome"]}>
            {t.candidates.map((c) => (
              <tr key={c.id} class={`outcome-${c.outcome}`}>
                <td>
                  <a href={href("memories", c.id)}>{c.id}</a>
                </td>
                <td>{num(c.cosine)}</td>
                <td>{num(c.bm25)}</td>
                <td>{num(c.finalScore)}</td>
                <td>{c.matchedVia}</td>
                <td data-outcome={c.outcome}>{c.outcome}</td>
              </tr>
            ))}
          </ListTable>
          <h2>Request</h2>
          <pre class="json">{pretty(t.request ?? {})}</pre>
        </>
      )}
    </section>
  );
}
