import { useEffect } from "preact/hooks";
import { AdminPage } from "./pages/admin.js";
import { MarketplaceDetailPage } from "./pages/marketplace-detail.js";
import { MarketplacePage } from "./pages/marketplace.js";
import { MemoriesPage } from "./pages/memories.js";
import { MemoryDetailPage } from "./pages/memory-detail.js";
import { RecallPage } from "./pages/recall.js";
import { SignInPage } from "./pages/sign-in.js";
import { SkillDetailPage } from "./pages/skill-detail.js";
import { SkillsPage } from "./pages/skills.js";
import { TraceDetailPage } from "./pages/trace-detail.js";
import { TracesPage } from "./pages/traces.js";
import { UsagePage } from "./pages/usage.js";
import { api } from "./api.js";
import { href, useRoute } from "./router.js";
import { useLoad } from "./use-call.js";
import { endSession, useSession, type Role } from "./session.js";

interface Section {
  path: string;
  title: string;
}

// Agent keys (container or workspace) use the agent API; admin keys only the admin API.
const sections: Record<Role, Section[]> = {
  agent: [
    { path: "memories", title: "Memories" },
    { path: "recall", title: "Recall" },
    { path: "traces", title: "Traces" },
    { path: "usage", title: "Usage" },
    { path: "skills", title: "Skills" },
    { path: "marketplace", title: "Marketplace" },
  ],
  admin: [{ path: "admin", title: "Admin" }],
};

function pageOf(section: string, rest: string[]) {
  const [id] = rest;
  switch (section) {
    case "memories":
      return id ? <MemoryDetailPage key={id} id={id} /> : <MemoriesPage />;
    case "recall":
      return <RecallPage />;
    case "traces":
      return id ? <TraceDetailPage key={id} id={id} /> : <TracesPage />;
    case "usage":
      return <UsagePage />;
    case "skills":
      return id ? <SkillDetailPage key={id} id={id} /> : <SkillsPage />;
    case "marketplace":
      return id ? <MarketplaceDetailPage key={id} id={id} /> : <MarketplacePage />;
    default:
      return <AdminPage tab={id} />;
  }
}

export function App() {
  const { session, notice } = useSession();
  const route = useRoute();
  const available = session ? sections[session.role] : [];
  const [first, ...rest] = route.parts;
  const section = available.find((s) => s.path === first) ?? available[0];

  useEffect(() => {
    document.title = section ? `${section.title} · agentmem console` : "Sign in · agentmem console";
  }, [section]);

  // Which workspace and container an agent key belongs to, from its stats.
  const who = useLoad(async () => (session?.role === "agent" ? await api.stats.getStats({}) : undefined), [session?.role]);

  if (!session || !section) return <SignInPage notice={notice} />;
  return (
    <>
      <header class="top">
        <span class="brand">agentmem console</span>
        <nav aria-label="Pages">
          {available.map((s) => (
            <a key={s.path} href={href(s.path)} aria-current={s === section ? "page" : undefined}>
              {s.title}
            </a>
          ))}
        </nav>
        <span class="muted who" data-testid="who">
          {session.role === "admin"
            ? "admin key"
            : who.data
              ? `${who.data.workspace} · ${who.data.container ?? "whole workspace"}`
              : "agent key"}
        </span>
        <button type="button" onClick={() => endSession()}>
          Sign out
        </button>
      </header>
      <main>{pageOf(section.path, section.path === first ? rest : [])}</main>
    </>
  );
}
