import { Code, ConnectError } from "@connectrpc/connect";
import { useState } from "preact/hooks";
import { api } from "../api.js";
import { Form, TextField } from "../components/fields.js";
import { Problem } from "../components/problem.js";
import { InputError } from "../format.js";
import { navigate } from "../router.js";
import { startSession, type Role } from "../session.js";
import { useAction } from "../use-call.js";

/** What the key may do: agent keys read their workspace's stats, admin keys the moderation stats. */
async function roleOf(key: string): Promise<Role> {
  const headers = { authorization: `Bearer ${key}` };
  try {
    await api.stats.getStats({}, { headers });
    return "agent";
  } catch (err) {
    if (ConnectError.from(err).code !== Code.PermissionDenied) throw err;
  }
  await api.moderation.getModerationStats({}, { headers });
  return "admin";
}

export function SignInPage({ notice }: { notice: string | null }) {
  const [key, setKey] = useState("");
  const action = useAction();
  const signIn = () =>
    action.run(async () => {
      const trimmed = key.trim();
      if (!trimmed) throw new InputError("paste an API key");
      const role = await roleOf(trimmed);
      setKey("");
      startSession(trimmed, role);
      navigate(role === "admin" ? "admin" : "memories");
    });
  return (
    <main class="sign-in">
      <h1>agentmem console</h1>
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      <Form label="Sign in" onSubmit={signIn}>
        <TextField label="API key" type="password" value={key} onInput={setKey} required placeholder="amk_…" autoComplete="off" />
        <button type="submit" disabled={action.busy}>
          Sign in
        </button>
      </Form>
      <Problem problem={action.problem} />
      <p class="muted">
        An agent key (one container or a whole workspace) opens memories, recall, traces, usage, skills and the marketplace; an
        admin key opens keys, workspaces, moderation and the email outbox. The key is kept in this tab's session storage only,
        never in a URL, and signing out forgets it.
      </p>
    </main>
  );
}
