import { useState } from "preact/hooks";
import { EmailStatusSchema } from "../../../../gen/agent/v1/moderation_pb.js";
import { api } from "../api.js";
import { EnumSelect } from "../components/fields.js";
import { Pager, usePages } from "../components/pager.js";
import { Loading, Problem } from "../components/problem.js";
import { enumLabel, enumOptions, when } from "../format.js";
import { useLoad } from "../use-call.js";

export function AdminEmails() {
  const [status, setStatus] = useState(0);
  const pages = usePages();
  const list = useLoad(() => api.moderation.listEmails({ status, pageSize: 20, pageToken: pages.token }), [status, pages.token]);
  return (
    <>
      <div class="form">
        <EnumSelect
          label="Status"
          value={status}
          options={enumOptions(EmailStatusSchema)}
          none="any"
          onChange={(s) => {
            pages.reset();
            setStatus(s);
          }}
        />
      </div>
      <Problem problem={list.problem} />
      <Loading when={list.loading && !list.data} />
      {list.data && (
        <>
          <ul class="cards" aria-label="Emails">
            {list.data.emails.map((e) => (
              <li key={e.id} class="card">
                <h2>{e.subject}</h2>
                <p class="muted">
                  to {e.to} · {e.kind} · skill {e.skillId} · <span class={`badge email-${enumLabel(EmailStatusSchema, e.status)}`}>{enumLabel(EmailStatusSchema, e.status)}</span> ·{" "}
                  {e.attempts} attempts · queued {when(e.createdAt)}
                  {e.sentAt && <> · sent {when(e.sentAt)}</>}
                  {e.nextAttemptAt && !e.sentAt && <> · next attempt {when(e.nextAttemptAt)}</>}
                </p>
                {e.lastError && <p class="problem">Last error: {e.lastError}</p>}
                <details>
                  <summary>Body</summary>
                  <pre class="email-body">{e.body}</pre>
                </details>
              </li>
            ))}
          </ul>
          {list.data.emails.length === 0 && <p class="muted">No emails.</p>}
          <Pager pages={pages} nextToken={list.data.nextPageToken} label="Emails" />
        </>
      )}
    </>
  );
}
