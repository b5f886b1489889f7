import { useState } from "preact/hooks";
import { api } from "../api.js";
import { Checkbox, Form, TextField } from "../components/fields.js";
import { Pager, usePages } from "../components/pager.js";
import { Loading, Problem } from "../components/problem.js";
import { num, when } from "../format.js";
import { useAction, useLoad } from "../use-call.js";
import { ListTable } from "../components/list-table.js";

export function AdminWorkspaces() {
  const pages = usePages();
  const list = useLoad(() => api.admin.listWorkspaces({ pageSize: 50, pageToken: pages.token }), [pages.token]);
  const action = useAction();
  const [plan, setPlan] = useState({ workspace: "", plan: "" });
  const [profile, setProfile] = useState({ workspace: "", authorHandle: "", email: "", removeEmail: false });
  const [done, setDone] = useState<string | null>(null);
  return (
    <>
      <Problem problem={list.problem} />
      <Loading when={list.loading && !list.data} />
      {list.data && (
        <>
          <ListTable label="Workspaces" columns={["Workspace", "Plan", "Author handle", "Notice email", "Memories", "Skills", "Created"]}>
            {list.data.workspaces.map((w) => (
              <tr key={w.workspace}>
                <td>{w.workspace}</td>
                <td>
                  {w.plan}
                  {w.defaultPlan && <span class="muted"> (default)</span>}
                </td>
                <td>{w.authorHandle ?? "—"}</td>
                <td>{w.email ?? "—"}</td>
                <td>{num(w.memoriesStored)}</td>
                <td>{num(w.skillsStored)}</td>
                <td class="nowrap">{when(w.createdAt)}</td>
              </tr>
            ))}
          </ListTable>
          <Pager pages={pages} nextToken={list.data.nextPageToken} label="Workspaces" />
        </>
      )}
      <div class="two-up">
        <Form
          class="panel"
          label="Set plan"
          onSubmit={() =>
            void action.run(async () => {
              const set = await api.admin.setWorkspacePlan({ workspace: plan.workspace.trim(), plan: plan.plan.trim() });
              setDone(`${set.workspace} is on the ${set.plan} plan.`);
              list.reload();
            })
          }
        >
          <h2 class="wide">Plan</h2>
          <TextField label="Workspace" value={plan.workspace} onInput={(workspace) => setPlan({ ...plan, workspace })} required />
          <TextField label="Plan name" value={plan.plan} onInput={(p) => setPlan({ ...plan, plan: p })} required hint="built in: free, pro, enterprise, unlimited" />
          <div class="actions">
            <button type="submit" disabled={action.busy}>
              Set plan
            </button>
          </div>
        </Form>
        <Form
          class="panel"
          label="Set author profile"
          onSubmit={() =>
            void action.run(async () => {
              const set = await api.admin.setAuthorProfile({
                workspace: profile.workspace.trim(),
                authorHandle: profile.authorHandle.trim() || undefined,
                email: profile.removeEmail ? "" : profile.email.trim() || undefined,
              });
              setDone(`${set.workspace} publishes as ${set.authorHandle}${set.email ? `, notices to ${set.email}` : ", without a notice email"}.`);
              list.reload();
            })
          }
        >
          <h2 class="wide">Author profile</h2>
          <TextField label="Workspace" value={profile.workspace} onInput={(workspace) => setProfile({ ...profile, workspace })} required />
          <TextField label="Author handle" value={profile.authorHandle} onInput={(authorHandle) => setProfile({ ...profile, authorHandle })} hint="unchanged when empty" />
          <TextField label="Notice email" type="email" value={profile.email} onInput={(email) => setProfile({ ...profile, email })} hint="unchanged when empty" />
          <Checkbox label="Remove the notice email" checked={profile.removeEmail} onChange={(removeEmail) => setProfile({ ...profile, removeEmail })} />
          <div class="actions">
            <button type="submit" disabled={action.busy}>
              Set profile
            </button>
          </div>
        </Form>
      </div>
      <Problem problem={action.problem} />
      {done && <p role="status">{done}</p>}
    </>
  );
}
