import { useState } from "preact/hooks";
import {
  ListingState,
  ListingStateSchema,
  SkillMaturitySchema,
  SkillSource,
  SkillSourceSchema,
  SkillState,
  SkillVisibility,
  SkillVisibilitySchema,
  type Skill,
} from "../../../../gen/agent/v1/skill_pb.js";
import { api } from "../api.js";
import { download, zip } from "../components/download.js";
import { Form, Select, TextArea } from "../components/fields.js";
import { InstalledCopyPanel, YankForm } from "../components/installed-copy.js";
import { Markdown } from "../components/markdown.js";
import { Loading, Problem } from "../components/problem.js";
import { enumLabel, when } from "../format.js";
import { href } from "../router.js";
import { useAction, useLoad } from "../use-call.js";

const base64Bytes = (b64: string) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));

/** The SKILL.md alone, or the skill's folder as a ZIP when it has other files. */
async function exportSkill(skill: Skill): Promise<void> {
  const exported = await api.skills.exportSkill({ id: skill.id, version: skill.version });
  if (exported.files.length === 0) {
    download(`${skill.slug}-SKILL.md`, exported.content, "text/markdown");
    return;
  }
  const encoder = new TextEncoder();
  const files = [
    { path: `${skill.slug}/${exported.filename}`, bytes: encoder.encode(exported.content) },
    ...exported.files.map((f) => ({
      path: `${skill.slug}/${f.path}`,
      bytes: f.data.case === "base64" ? base64Bytes(f.data.value) : encoder.encode(f.data.value ?? ""),
    })),
  ];
  download(`${skill.slug}.zip`, zip(files), "application/zip");
}

export function SkillDetailPage({ id }: { id: string }) {
  const [version, setVersion] = useState<number | undefined>(undefined);
  const [latest, setLatest] = useState<number | undefined>(undefined);
  const loaded = useLoad(async () => {
    const { skill } = await api.skills.getSkill({ id, version });
    if (version === undefined && skill) setLatest(skill.version);
    return skill;
  }, [id, version]);
  const s = loaded.data;
  const isLatest = s !== undefined && s.version === latest;

  return (
    <section aria-labelledby="skill-title">
      <p>
        <a href={href("skills")}>← Skills</a>
      </p>
      <h1 id="skill-title">{s ? s.name : `Skill ${id}`}</h1>
      <Problem problem={loaded.problem} />
      <Loading when={loaded.loading && !s} />
      {s && (
        <>
          <p class="lead">{s.description}</p>
          <dl class="facts">
            <dt>Slug</dt>
            <dd>{s.slug}</dd>
            <dt>Version</dt>
            <dd>
              {latest !== undefined && latest > 1 ? (
                <Select
                  label="Version shown"
                  value={String(s.version)}
                  options={Array.from({ length: latest }, (_, i) => latest - i).map((v) => ({ value: String(v), label: v === latest ? `${v} (current)` : String(v) }))}
                  onChange={(v) => setVersion(Number(v) === latest ? undefined : Number(v))}
                />
              ) : (
                s.version
              )}
            </dd>
            <dt>Maturity</dt>
            <dd>{enumLabel(SkillMaturitySchema, s.maturity)}</dd>
            <dt>Visibility</dt>
            <dd data-testid="visibility">{enumLabel(SkillVisibilitySchema, s.visibility)}</dd>
            <dt>Marketplace</dt>
            <dd data-testid="listing-state">{s.listingState === undefined ? "never published" : enumLabel(ListingStateSchema, s.listingState)}</dd>
            <dt>Source</dt>
            <dd>
              {enumLabel(SkillSourceSchema, s.source)}
              {s.installedFrom && (
                <>
                  {" "}
                  from <a href={href("marketplace", s.installedFrom.id)}>{s.installedFrom.id}</a> version {s.installedFrom.version}
                </>
              )}
            </dd>
            {s.state === SkillState.DEPRECATED && (
              <>
                <dt>Deprecated</dt>
                <dd>
                  {when(s.deprecatedAt)} {s.deprecationMessage} {s.replacedBy && <>→ {s.replacedBy}</>}
                </dd>
              </>
            )}
            <dt>Tags</dt>
            <dd>{s.tags.join(", ") || "—"}</dd>
            <dt>Containers</dt>
            <dd>{s.containers.join(", ") || "workspace-wide"}</dd>
            <dt>License</dt>
            <dd>{s.license ?? "—"}</dd>
            <dt>Compatibility</dt>
            <dd>{s.compatibility ?? "—"}</dd>
            <dt>Allowed tools</dt>
            <dd>{s.allowedTools.join(" ") || "—"}</dd>
            <dt>Updated</dt>
            <dd>{when(s.updatedAt)}</dd>
          </dl>
          {s.lineage.length > 0 && (
            <>
              <h2>Lineage</h2>
              <ol class="lineage" aria-label="Lineage, parent first">
                {s.lineage.map((l) => (
                  <li key={`${l.id}-${l.version}`}>
                    {l.authorHandle}/{l.slug} version {l.version}
                  </li>
                ))}
              </ol>
            </>
          )}
          <h2>SKILL.md</h2>
          <Markdown text={s.content} label={`${s.name} SKILL.md`} />
          {s.files.length > 0 && (
            <>
              <h2>Files</h2>
              <ul aria-label="Files">
                {s.files.map((f) => (
                  <li key={f.path}>
                    {f.path} <span class="muted">({f.data.case})</span>
                  </li>
                ))}
              </ul>
            </>
          )}
          <SkillActions skill={s} current={isLatest} onChanged={() => (version === undefined ? loaded.reload() : setVersion(undefined))} />
        </>
      )}
    </section>
  );
}

function SkillActions({ skill, current, onChanged }: { skill: Skill; current: boolean; onChanged(): void }) {
  const action = useAction();
  const [message, setMessage] = useState("");
  const [appealed, setAppealed] = useState<string | null>(null);
  const installed = skill.source === SkillSource.INSTALLED;
  const removed = skill.listingState === ListingState.REMOVED;
  const run = (fn: () => Promise<unknown>) => void action.run(async () => (await fn(), onChanged()));
  return (
    <section class="panel" aria-labelledby="actions-title">
      <h2 id="actions-title">Actions</h2>
      <div class="actions">
        <button type="button" disabled={action.busy} onClick={() => void action.run(() => exportSkill(skill))}>
          Export version {skill.version}
        </button>
        {current && !installed && skill.visibility === SkillVisibility.PRIVATE && !removed && (
          <button type="button" disabled={action.busy} onClick={() => run(() => api.skills.publishSkill({ id: skill.id }))}>
            Publish to the marketplace
          </button>
        )}
        {current && skill.visibility === SkillVisibility.PUBLIC && skill.source !== SkillSource.FORKED && !removed && (
          <button type="button" disabled={action.busy} onClick={() => run(() => api.skills.unpublishSkill({ id: skill.id }))}>
            Unpublish
          </button>
        )}
        {current && !installed && skill.state !== SkillState.DEPRECATED && skill.source !== SkillSource.FORKED && (
          <button type="button" disabled={action.busy} onClick={() => run(() => api.skills.deprecateSkill({ id: skill.id }))}>
            Deprecate
          </button>
        )}
      </div>
      {installed && current && skill.installedFrom && <InstalledCopyPanel skill={skill} onChanged={onChanged} />}
      {current && !installed && skill.visibility === SkillVisibility.PUBLIC && skill.listingState !== undefined && <YankForm skill={skill} />}
      {removed && (
        <>
          <p class="notice">Moderators took this skill down from the marketplace. Ask them to review it:</p>
          <Form
            label="Appeal the takedown"
            onSubmit={() =>
              void action.run(async () => {
                const { appeal } = await api.marketplace.appealTakedown({ id: skill.id, message });
                setAppealed(appeal?.id ?? null);
                setMessage("");
              })
            }
          >
            <TextArea label="Appeal message" value={message} onInput={setMessage} required />
            <div class="actions">
              <button type="submit" disabled={action.busy}>
                Appeal
              </button>
            </div>
          </Form>
          {appealed && (
            <p role="status" data-testid="appealed">
              Appeal {appealed} sent; it is pending.
            </p>
          )}
        </>
      )}
      <Problem problem={action.problem} />
    </section>
  );
}
