import { href } from "../router.js";
import { AdminEmails } from "./admin-emails.js";
import { AdminKeys } from "./admin-keys.js";
import { AdminModeration } from "./admin-moderation.js";
import { AdminWorkspaces } from "./admin-workspaces.js";

const tabs = [
  { path: "moderation", title: "Moderation" },
  { path: "keys", title: "Keys" },
  { path: "workspaces", title: "Workspaces" },
  { path: "emails", title: "Email outbox" },
];

export function AdminPage({ tab }: { tab: string | undefined }) {
  const current = tabs.find((t) => t.path === tab) ?? tabs[0]!;
  return (
    <section aria-labelledby="admin-title">
      <h1 id="admin-title">Admin: {current.title}</h1>
      <nav class="tabs" aria-label="Admin">
        {tabs.map((t) => (
          <a key={t.path} href={href("admin", t.path)} aria-current={t === current ? "page" : undefined}>
            {t.title}
          </a>
        ))}
      </nav>
      {current.path === "moderation" && <AdminModeration />}
      {current.path === "keys" && <AdminKeys />}
      {current.path === "workspaces" && <AdminWorkspaces />}
      {current.path === "emails" && <AdminEmails />}
    </section>
  );
}
