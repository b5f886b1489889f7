import { useState } from "preact/hooks";
import { api } from "../api.js";
import { ConfirmButton } from "../components/confirm-button.js";
import { Checkbox, Form, TextField } from "../components/fields.js";
import { Loading, Problem } from "../components/problem.js";
import { SecretOnce } from "../components/secret-once.js";
import { isoFromLocal, when } from "../format.js";
import { useAction, useLoad } from "../use-call.js";
import { ListTable } from "../components/list-table.js";

interface NewKey {
  workspace: string;
  container: string;
  name: string;
  expiresAt: string;
  admin: boolean;
}

const blank: NewKey = { workspace: "", container: "", name: "", expiresAt: "", admin: false };

export function AdminKeys() {
  const [workspace, setWorkspace] = useState("");
  const [filter, setFilter] = useState({ workspace: "", includeRevoked: false });
  const keys = useLoad(() => api.admin.listKeys(filter), [filter]);
  const [draft, setDraft] = useState(blank);
  const [secret, setSecret] = useState<{ title: string; secret: string } | null>(null);
  const action = useAction();
  const set = (patch: Partial<NewKey>) => setDraft({ ...draft, ...patch });
  return (
    <>
      {secret && <SecretOnce title={secret.title} secret={secret.secret} onDone={() => setSecret(null)} />}
      <details class="panel">
        <summary>New key</summary>
        <Form
          label="New key"
          onSubmit={() =>
            void action.run(async () => {
              const created = await api.admin.createKey({
                workspace: draft.admin ? "" : draft.workspace.trim(),
                container: draft.admin ? undefined : draft.container.trim() || undefined,
                name: draft.name,
                expiresAt: isoFromLocal(draft.expiresAt),
                admin: draft.admin,
              });
              setSecret({ title: `Key ${created.id} (${created.role}${created.workspace ? `, ${created.workspace}` : ""}${created.container ? `/${created.container}` : ""}) created.`, secret: created.key });
              setDraft(blank);
              keys.reload();
            })
          }
        >
          <TextField label="Workspace" value={draft.workspace} onInput={(w) => set({ workspace: w })} hint="created on first use" />
          <TextField label="Container" value={draft.container} onInput={(container) => set({ container })} hint="empty: a workspace-level key" />
          <TextField label="Name" value={draft.name} onInput={(name) => set({ name })} />
          <TextField label="Expires" type="datetime-local" value={draft.expiresAt} onInput={(expiresAt) => set({ expiresAt })} />
          <Checkbox label="Admin key (no workspace)" checked={draft.admin} onChange={(admin) => set({ admin })} />
          <div class="actions">
            <button type="submit" disabled={action.busy}>
              Create key
            </button>
          </div>
        </Form>
      </details>
      <Problem problem={action.problem} />
      <Form label="Filter keys" onSubmit={() => setFilter({ ...filter, workspace: workspace.trim() })}>
        <TextField label="Workspace" value={workspace} onInput={setWorkspace} hint="empty: every key" />
        <Checkbox label="Include revoked" checked={filter.includeRevoked} onChange={(includeRevoked) => setFilter({ ...filter, includeRevoked })} />
        <div class="actions">
          <button type="submit">Show keys</button>
        </div>
      </Form>
      <Problem problem={keys.problem} />
      <Loading when={keys.loading && !keys.data} />
      {keys.data && (
        <ListTable label="Keys" columns={["Key", "Workspace / container", "Role", "Name", "Created", "Expires", "State", "Actions"]}>
          {keys.data.keys.map((k) => (
            <tr key={k.id}>
              <td>
                {k.id}
                <div class="muted">{k.prefix}…</div>
              </td>
              <td>
                {k.workspace ?? "—"}
                {k.container && `/${k.container}`}
              </td>
              <td>{k.role}</td>
              <td>{k.name}</td>
              <td class="nowrap">{when(k.createdAt)}</td>
              <td class="nowrap">{k.expiresAt ? when(k.expiresAt) : "never"}</td>
              <td>{k.revokedAt ? `revoked ${when(k.revokedAt)}` : k.lastRotatedAt ? `rotated ${when(k.lastRotatedAt)}` : "active"}</td>
              <td>
                {!k.revokedAt && (
                  <div class="actions">
                    <ConfirmButton
                      label="Rotate"
                      confirm={`Rotate ${k.id}? Its current secret stops working.`}
                      disabled={action.busy}
                      onConfirm={() =>
                        void action.run(async () => {
                          const rotated = await api.admin.rotateKey({ id: k.id });
                          setSecret({ title: `Key ${k.id} rotated.`, secret: rotated.key });
                          keys.reload();
                        })
                      }
                    />
                    <ConfirmButton
                      label="Revoke"
                      confirm={`Revoke ${k.id}?`}
                      disabled={action.busy}
                      onConfirm={() =>
                        void action.run(async () => {
                          await api.admin.revokeKey({ id: k.id });
                          keys.reload();
                        })
                      }
                    />
                  </div>
                )}
              </td>
            </tr>
          ))}
        </ListTable>
      )}
    </>
  );
}
