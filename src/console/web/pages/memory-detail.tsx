import { useState } from "preact/hooks";
import { MemorySourceSchema, MemoryStateSchema, MemoryTypeSchema, SeveritySchema, type Memory } from "../../../../gen/agent/v1/memory_pb.js";
import { api } from "../api.js";
import { ConfirmButton } from "../components/confirm-button.js";
import { EnumSelect, Form, Select, TextArea, TextField } from "../components/fields.js";
import { draftFields, type MemoryDraft } from "../components/memory-form.js";
import { Loading, Problem } from "../components/problem.js";
import { VersionDiff } from "../components/version-diff.js";
import { enumLabel, enumOptions, num, pretty, when } from "../format.js";
import { href, navigate } from "../router.js";
import { useAction, useLoad } from "../use-call.js";
import { ListTable } from "../components/list-table.js";

export function MemoryDetailPage({ id }: { id: string }) {
  const loaded = useLoad(
    async () => {
      const [memory, versions, shadowed] = await Promise.all([
        api.memories.getMemory({ id }),
        api.memories.listMemoryVersions({ id }),
        api.memories.listShadowedMemories({ id, pageSize: 50 }),
      ]);
      return { memory, versions: versions.versions, shadowed };
    },
    [id],
  );
  const remove = useAction();
  const m = loaded.data?.memory;

  return (
    <section aria-labelledby="memory-title">
      <p>
        <a href={href("memories")}>← Memories</a>
      </p>
      <h1 id="memory-title">Memory {id}</h1>
      <Problem problem={loaded.problem} />
      <Loading when={loaded.loading && !m} />
      {m && loaded.data && (
        <>
          <p class="memory-content">{m.content}</p>
          <dl class="facts">
            <dt>State</dt>
            <dd>
              <span class={`badge state-${enumLabel(MemoryStateSchema, m.state)}`}>{enumLabel(MemoryStateSchema, m.state)}</span>
            </dd>
            <dt>Type</dt>
            <dd>{enumLabel(MemoryTypeSchema, m.type)}</dd>
            <dt>Version</dt>
            <dd>{m.version}</dd>
            <dt>Containers</dt>
            <dd>{m.containers.join(", ")}</dd>
            <dt>Tags</dt>
            <dd>{m.tags.join(", ") || "—"}</dd>
            <dt>Source</dt>
            <dd>{enumLabel(MemorySourceSchema, m.source)}</dd>
            <dt>Confidence</dt>
            <dd>{num(m.confidence)}</dd>
            <dt>Severity</dt>
            <dd>{enumLabel(SeveritySchema, m.severity)}</dd>
            <dt>Valid</dt>
            <dd>
              {when(m.validFrom)} → {m.validUntil ? when(m.validUntil) : "no end"}
            </dd>
            <dt>Created</dt>
            <dd>{when(m.createdAt)}</dd>
            <dt>Updated</dt>
            <dd>{when(m.updatedAt)}</dd>
            <dt>Written by key</dt>
            <dd>{m.provenance?.keyId ?? "—"}</dd>
          </dl>
          <h2>Metadata</h2>
          <pre class="json">{pretty(m.metadata ?? {})}</pre>

          <h2>Shadowing</h2>
          {m.supersededBy ? (
            <p>
              Shadowed by <a href={href("memories", m.supersededBy)}>{m.supersededBy}</a> since {when(m.supersededAt)}.
            </p>
          ) : (
            <p class="muted">Nothing shadows this memory.</p>
          )}
          {loaded.data.shadowed.memories.length > 0 ? (
            <>
              <p>This memory shadowed:</p>
              <ul aria-label="Memories this one shadowed">
                {loaded.data.shadowed.memories.map((s) => (
                  <li key={s.id}>
                    <a href={href("memories", s.id)}>{s.content}</a> <span class="muted">({s.id})</span>
                  </li>
                ))}
              </ul>
              {loaded.data.shadowed.nextPageToken && <p class="muted">…and more.</p>}
            </>
          ) : (
            <p class="muted">This memory shadowed nothing.</p>
          )}

          <Versions key={m.version} versions={loaded.data.versions} />
          <EditMemory key={m.version} memory={m} onSaved={loaded.reload} />

          <h2>Delete</h2>
          <p class="muted">Deleting erases every version; memories it shadowed become active again.</p>
          <ConfirmButton
            label="Delete memory"
            confirm={`Delete all ${m.version} versions of this memory?`}
            disabled={remove.busy}
            onConfirm={() =>
              void remove.run(async () => {
                await api.memories.deleteMemory({ id });
                navigate("memories");
              })
            }
          />
          <Problem problem={remove.problem} />
        </>
      )}
    </section>
  );
}

function Versions({ versions }: { versions: Memory[] }) {
  const latest = versions.length;
  const [from, setFrom] = useState(Math.max(1, latest - 1));
  const [to, setTo] = useState(latest);
  const options = versions.map((v) => ({ value: String(v.version), label: `version ${v.version} · ${when(v.updatedAt)}` }));
  const a = versions.find((v) => v.version === from);
  const b = versions.find((v) => v.version === to);
  return (
    <>
      <h2>Versions ({versions.length})</h2>
      <ListTable label="Versions" columns={["Version", "Written", "By key", "Content"]}>
        {versions.map((v) => (
          <tr key={v.version}>
            <td>{v.version}</td>
            <td class="nowrap">{when(v.updatedAt)}</td>
            <td>{v.provenance?.keyId}</td>
            <td class="content-cell">{v.content}</td>
          </tr>
        ))}
      </ListTable>
      {latest > 1 && (
        <div class="panel">
          <div class="form">
            <Select label="Compare version" value={String(from)} options={options} onChange={(v) => setFrom(Number(v))} />
            <Select label="with version" value={String(to)} options={options} onChange={(v) => setTo(Number(v))} />
          </div>
          {a && b && <VersionDiff from={a} to={b} />}
        </div>
      )}
    </>
  );
}

const draftOf = (m: Memory): MemoryDraft => ({
  content: m.content,
  type: m.type,
  containers: m.containers.join(", "),
  tags: m.tags.join(", "),
  metadata: JSON.stringify(m.metadata ?? {}),
  confidence: String(m.confidence),
});

function EditMemory({ memory, onSaved }: { memory: Memory; onSaved(): void }) {
  const [draft, setDraft] = useState(draftOf(memory));
  const action = useAction();
  const set = (patch: Partial<MemoryDraft>) => setDraft({ ...draft, ...patch });
  const save = () =>
    action.run(async () => {
      const original = draftOf(memory);
      // Only the fields changed here go in the mask: an edit never clears what it did not touch.
      const changed = (Object.keys(draft) as Array<keyof MemoryDraft>).filter((k) => draft[k] !== original[k]);
      if (changed.length === 0) return;
      await api.memories.updateMemory({ id: memory.id, memory: draftFields(draft), updateMask: { paths: changed } });
      onSaved();
    });
  return (
    <details class="panel">
      <summary>Edit (a new version)</summary>
      <Form label="Edit memory" onSubmit={save}>
        <TextArea label="Content" value={draft.content} onInput={(content) => set({ content })} required rows={4} />
        <EnumSelect label="Type" value={draft.type} options={enumOptions(MemoryTypeSchema)} none="(choose)" onChange={(type) => set({ type })} />
        <TextField label="Containers" value={draft.containers} onInput={(containers) => set({ containers })} />
        <TextField label="Tags" value={draft.tags} onInput={(tags) => set({ tags })} />
        <TextField label="Metadata" value={draft.metadata} onInput={(metadata) => set({ metadata })} />
        <TextField label="Confidence" type="number" step="0.01" value={draft.confidence} onInput={(confidence) => set({ confidence })} />
        <div class="actions">
          <button type="submit" disabled={action.busy}>
            Save as version {memory.version + 1}
          </button>
        </div>
      </Form>
      <Problem problem={action.problem} />
    </details>
  );
}
