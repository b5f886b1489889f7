import { useState } from "preact/hooks";
import { MemoryTypeSchema, SeveritySchema } from "../../../../gen/agent/v1/memory_pb.js";
import { SearchMode, SearchModeSchema, type RecallResponse } from "../../../../gen/agent/v1/recall_pb.js";
import { api } from "../api.js";
import { Checkbox, EnumChecks, EnumSelect, Form, TextArea, TextField } from "../components/fields.js";
import { Problem } from "../components/problem.js";
import { WhyBars } from "../components/why-bars.js";
import { enumLabel, enumOptions, num, optionalNumber, parseJsonObject, splitList, when } from "../format.js";
import { href } from "../router.js";
import { useAction } from "../use-call.js";

interface Query {
  query: string;
  mode: number;
  limit: string;
  types: number[];
  tags: string;
  containers: string;
  severity: number;
  minConfidence: string;
  threshold: string;
  maxTokens: string;
  metadata: string;
  includeExpired: boolean;
  includeShadowed: boolean;
}

const blank: Query = {
  query: "",
  mode: SearchMode.HYBRID,
  limit: "10",
  types: [],
  tags: "",
  containers: "",
  severity: 0,
  minConfidence: "",
  threshold: "",
  maxTokens: "",
  metadata: "",
  includeExpired: false,
  includeShadowed: false,
};

const filteredLabels: Array<[keyof NonNullable<NonNullable<RecallResponse["receipt"]>["filtered"]>, string]> = [
  ["belowThreshold", "below threshold"],
  ["deduplicated", "near-duplicates"],
  ["lowConfidence", "low confidence"],
  ["outsideValidityWindow", "outside validity window"],
  ["overTokenBudget", "over token budget"],
  ["shadowed", "shadowed"],
];

export function RecallPage() {
  const [q, setQ] = useState<Query>(blank);
  const [answer, setAnswer] = useState<RecallResponse | null>(null);
  const action = useAction();
  const set = (patch: Partial<Query>) => setQ({ ...q, ...patch });
  const recall = () =>
    action.run(async () => {
      setAnswer(
        await api.recall.recall({
          query: q.query,
          searchMode: q.mode,
          limit: optionalNumber(q.limit, "Limit"),
          types: q.types,
          tags: splitList(q.tags),
          containers: splitList(q.containers),
          severity: q.severity,
          minConfidence: optionalNumber(q.minConfidence, "Minimum confidence"),
          threshold: optionalNumber(q.threshold, "Threshold"),
          maxTokens: optionalNumber(q.maxTokens, "Token budget"),
          metadata: parseJsonObject(q.metadata, "Metadata"),
          includeExpired: q.includeExpired,
          includeShadowed: q.includeShadowed,
        }),
      );
    });

  const receipt = answer?.receipt;
  const meta = answer?.meta;
  return (
    <section aria-labelledby="recall-title">
      <h1 id="recall-title">Recall playground</h1>
      <Form label="Recall" onSubmit={recall}>
        <TextArea label="Query" value={q.query} rows={2} required onInput={(query) => set({ query })} />
        <EnumSelect label="Mode" value={q.mode} options={enumOptions(SearchModeSchema)} none="default (hybrid)" onChange={(mode) => set({ mode })} />
        <TextField label="Limit" type="number" value={q.limit} onInput={(limit) => set({ limit })} />
        <details class="wide">
          <summary>Filters</summary>
          <div class="form">
            <EnumChecks legend="Types" options={enumOptions(MemoryTypeSchema)} value={q.types} onChange={(types) => set({ types })} />
            <TextField label="Tags" value={q.tags} onInput={(tags) => set({ tags })} hint="any of, comma-separated" />
            <TextField label="Containers" value={q.containers} onInput={(containers) => set({ containers })} hint="comma-separated" />
            <EnumSelect label="Severity at least" value={q.severity} options={enumOptions(SeveritySchema)} none="any" onChange={(severity) => set({ severity })} />
            <TextField label="Minimum confidence" type="number" step="0.01" value={q.minConfidence} onInput={(minConfidence) => set({ minConfidence })} />
            <TextField label="Threshold" type="number" step="0.01" value={q.threshold} onInput={(threshold) => set({ threshold })} hint="minimum final score" />
            <TextField label="Token budget" type="number" value={q.maxTokens} onInput={(maxTokens) => set({ maxTokens })} />
            <TextField label="Metadata contains" value={q.metadata} onInput={(metadata) => set({ metadata })} placeholder='{"project": "atlas"}' />
            <Checkbox label="Include expired" checked={q.includeExpired} onChange={(includeExpired) => set({ includeExpired })} />
            <Checkbox label="Include shadowed" checked={q.includeShadowed} onChange={(includeShadowed) => set({ includeShadowed })} />
          </div>
        </details>
        <div class="actions">
          <button type="submit" disabled={action.busy}>
            Recall
          </button>
        </div>
      </Form>
      <Problem problem={action.problem} />
      {answer && (
        <>
          <h2>Receipt</h2>
          <p class="summary" role="status">
            <span data-testid="returned">{answer.memories.length} returned</span> of {receipt?.candidatesConsidered ?? "?"} candidates ·{" "}
            <span data-testid="tokens">{meta?.tokens ?? 0} tokens</span> · {receipt?.searchMode} · search {num(meta?.searchMs ?? 0, 1)} ms, total{" "}
            {num(meta?.totalMs ?? 0, 1)} ms
            {meta?.traceId && (
              <>
                {" "}
                · <a href={href("traces", meta.traceId)}>Open trace {meta.traceId}</a>
              </>
            )}
          </p>
          {receipt?.filtered && (
            <table class="kv" aria-label="Filtered out">
              <caption>Filtered out</caption>
              <tbody>
                {filteredLabels.map(([k, label]) => (
                  <tr key={k}>
                    <th scope="row">{label}</th>
                    <td data-filtered={k}>{receipt.filtered![k]}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          <h2>Results</h2>
          {answer.memories.length === 0 && <p class="muted">Nothing matched.</p>}
          <ol class="results">
            {answer.memories.map((m, i) => (
              <li key={m.id} class="result-item">
                <p class="memory-content">{m.content}</p>
                <p class="muted">
                  #{i + 1} · <a href={href("memories", m.id)}>{m.id}</a> · {enumLabel(MemoryTypeSchema, m.type)}
                  {m.why && (
                    <>
                      {" "}
                      · score <strong data-testid="final-score">{num(m.why.finalScore)}</strong>
                    </>
                  )}{" "}
                  · similarity {num(m.similarity)} · confidence {num(m.confidence)} · created {when(m.createdAt)}
                </p>
                {m.why && (
                  <details class="why">
                    <summary>Score breakdown</summary>
                    <WhyBars why={m.why} label={m.id} />
                  </details>
                )}
                {m.supersedes.length > 0 && (
                  <p class="muted">
                    Replaced:{" "}
                    {m.supersedes.map((s) => (
                      <a key={s.memoryId} href={href("memories", s.memoryId)}>
                        “{s.snippet}”{" "}
                      </a>
                    ))}
                  </p>
                )}
              </li>
            ))}
          </ol>
        </>
      )}
    </section>
  );
}
