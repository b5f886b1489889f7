import { useState } from "preact/hooks";
import { MemoryStateSchema, MemoryType, MemoryTypeSchema, type CreateMemoriesResponse } from "../../../../gen/agent/v1/memory_pb.js";
import { api } from "../api.js";
import { EnumChecks, EnumSelect, Form, Select, TextArea, TextField } from "../components/fields.js";
import { draftFields, emptyDraft, type MemoryDraft } from "../components/memory-form.js";
import { Pager, usePages } from "../components/pager.js";
import { Loading, Problem } from "../components/problem.js";
import { enumLabel, enumOptions, isoFromLocal, parseJsonObject, splitList, when } from "../format.js";
import { href } from "../router.js";
import { useAction, useLoad } from "../use-call.js";
import { ListTable } from "../components/list-table.js";

interface Filters {
  containers: string;
  types: number[];
  tags: string;
  state: number;
  metadata: string;
  createdAfter: string;
  createdBefore: string;
  pageSize: string;
}

const noFilters: Filters = { containers: "", types: [], tags: "", state: 0, metadata: "", createdAfter: "", createdBefore: "", pageSize: "20" };

const typeOptions = enumOptions(MemoryTypeSchema);

export function MemoriesPage() {
  const [draft, setDraft] = useState<Filters>(noFilters);
  const [filters, setFilters] = useState<Filters>(noFilters);
  const pages = usePages();
  const list = useLoad(
    () =>
      api.memories.listMemories({
        containers: splitList(filters.containers),
        types: filters.types,
        tags: splitList(filters.tags),
        state: filters.state,
        metadata: parseJsonObject(filters.metadata, "Metadata"),
        createdAfter: isoFromLocal(filters.createdAfter),
        createdBefore: isoFromLocal(filters.createdBefore),
        pageSize: Number(filters.pageSize),
        pageToken: pages.token,
      }),
    [filters, pages.token],
  );
  const set = (patch: Partial<Filters>) => setDraft({ ...draft, ...patch });

  return (
    <section aria-labelledby="memories-title">
      <h1 id="memories-title">Memories</h1>
      <NewMemory
        onStored={() => {
          pages.reset();
          list.reload();
        }}
      />
      <details class="panel" open>
        <summary>Filters</summary>
        <Form
          label="Filter memories"
          onSubmit={() => {
            pages.reset();
            setFilters(draft);
          }}
        >
          <TextField label="Containers" value={draft.containers} onInput={(containers) => set({ containers })} hint="any of, comma-separated" />
          <TextField label="Tags" value={draft.tags} onInput={(tags) => set({ tags })} hint="any of, comma-separated" />
          <EnumChecks legend="Types" options={typeOptions} value={draft.types} onChange={(types) => set({ types })} />
          <EnumSelect label="State" value={draft.state} options={enumOptions(MemoryStateSchema)} none="active and shadowed" onChange={(state) => set({ state })} />
          <TextField label="Metadata contains" value={draft.metadata} onInput={(metadata) => set({ metadata })} placeholder='{"project": "atlas"}' />
          <TextField label="Created after" type="datetime-local" value={draft.createdAfter} onInput={(createdAfter) => set({ createdAfter })} />
          <TextField label="Created before" type="datetime-local" value={draft.createdBefore} onInput={(createdBefore) => set({ createdBefore })} />
          <Select label="Per page" value={draft.pageSize} options={["20", "50", "100", "200"].map((v) => ({ value: v, label: v }))} onChange={(pageSize) => set({ pageSize })} />
          <div class="actions">
            <button type="submit">Apply filters</button>
            <button
              type="button"
              onClick={() => {
                setDraft(noFilters);
                setFilters(noFilters);
                pages.reset();
              }}
            >
              Clear
            </button>
          </div>
        </Form>
      </details>
      <Problem problem={list.problem} />
      <Loading when={list.loading && !list.data} />
      {list.data && (
        <>
          <ListTable label="Memories" columns={["Content", "Type", "State", "Containers", "Tags", "Created"]}>
            {list.data.memories.map((m) => (
              <tr key={m.id}>
                <td class="content-cell">
                  <a href={href("memories", m.id)}>{m.content}</a>
                </td>
                <td>{enumLabel(MemoryTypeSchema, m.type)}</td>
                <td>
                  <span class={`badge state-${enumLabel(MemoryStateSchema, m.state)}`}>{enumLabel(MemoryStateSchema, m.state)}</span>
                </td>
                <td>{m.containers.join(", ")}</td>
                <td>{m.tags.join(", ")}</td>
                <td class="nowrap">{when(m.createdAt)}</td>
              </tr>
            ))}
          </ListTable>
          {list.data.memories.length === 0 && <p class="muted">No memories match.</p>}
          <Pager pages={pages} nextToken={list.data.nextPageToken} label="Memories" />
        </>
      )}
    </section>
  );
}

function NewMemory({ onStored }: { onStored(): void }) {
  const [draft, setDraft] = useState<MemoryDraft>(emptyDraft(MemoryType.FACT));
  const [result, setResult] = useState<CreateMemoriesResponse | null>(null);
  const action = useAction();
  const set = (patch: Partial<MemoryDraft>) => setDraft({ ...draft, ...patch });
  const store = () =>
    action.run(async () => {
      const created = await api.memories.createMemories(draftFields(draft));
      setResult(created);
      setDraft(emptyDraft(draft.type));
      onStored();
    });
  const stored = result?.results[0];
  return (
    <details class="panel">
      <summary>New memory</summary>
      <Form label="New memory" onSubmit={store}>
        <TextArea label="Content" value={draft.content} onInput={(content) => set({ content })} required />
        <EnumSelect label="Type" value={draft.type} options={typeOptions} none="(choose)" onChange={(type) => set({ type })} />
        <TextField label="Containers" value={draft.containers} onInput={(containers) => set({ containers })} hint="default: the key's container; required for a workspace key" />
        <TextField label="Tags" value={draft.tags} onInput={(tags) => set({ tags })} hint="comma-separated" />
        <TextField label="Metadata" value={draft.metadata} onInput={(metadata) => set({ metadata })} placeholder='{"project": "atlas"}' />
        <TextField label="Confidence" type="number" step="0.01" value={draft.confidence} onInput={(confidence) => set({ confidence })} hint="0 to 1; default by source" />
        <div class="actions">
          <button type="submit" disabled={action.busy}>
            Store memory
          </button>
        </div>
      </Form>
      <Problem problem={action.problem} />
      {stored && (
        <div class="result" role="status">
          {stored.duplicateOf ? (
            <p>
              Not stored again: a duplicate of <a href={href("memories", stored.duplicateOf)}>{stored.duplicateOf}</a>.
            </p>
          ) : (
            <p>
              Stored <a href={href("memories", stored.id)}>{stored.id}</a>.
            </p>
          )}
          {result!.contradictions.map((c) => (
            <p key={c.conflictsWith}>
              Contradicts <a href={href("memories", c.conflictsWith)}>{c.conflictsWith}</a> ({c.reason}){c.shadowed ? ", now shadowed" : ", left active"}: “{c.snippet}”
            </p>
          ))}
        </div>
      )}
    </details>
  );
}
