import { useState } from "preact/hooks";
import {
  ReportReason,
  ReportReasonSchema,
  ReportStatusSchema,
  VersionReviewSchema,
  type MarketplaceVersion,
  type ReportSkillResponse,
} from "../../../../gen/agent/v1/marketplace_pb.js";
import { ListingStateSchema, SkillMaturitySchema, type Skill } from "../../../../gen/agent/v1/skill_pb.js";
import { api } from "../api.js";
import { EnumSelect, Form, TextArea, TextField } from "../components/fields.js";
import { ListTable } from "../components/list-table.js";
import { Markdown } from "../components/markdown.js";
import { ScanFindings } from "../components/scan-findings.js";
import { Loading, Problem } from "../components/problem.js";
import { enumLabel, enumOptions, InputError, when } from "../format.js";
import { href } from "../router.js";
import { useAction, useLoad } from "../use-call.js";

export function MarketplaceDetailPage({ id }: { id: string }) {
  const [version, setVersion] = useState<number | undefined>(undefined);
  const loaded = useLoad(async () => (await api.marketplace.getMarketplaceSkill({ id, version })).skill, [id, version]);
  const versions = useLoad(async () => (await api.marketplace.listMarketplaceVersions({ id })).versions, [id]);
  // The caller's own listing is managed on its skill page: installing, forking or reporting it means nothing.
  const own = useLoad(async () => (await api.stats.getStats({})).authorHandle, []);
  const s = loaded.data;
  return (
    <section aria-labelledby="listing-title">
      <p>
        <a href={href("marketplace")}>← Marketplace</a>
      </p>
      <h1 id="listing-title">{s ? s.name : `Skill ${id}`}</h1>
      <Problem problem={loaded.problem} />
      <Loading when={loaded.loading && !s} />
      {s && (
        <>
          <p class="lead">{s.description}</p>
          <dl class="facts">
            <dt>Author</dt>
            <dd>
              {s.authorHandle}
              {s.verified && <span class="badge"> verified</span>}
            </dd>
            <dt>Slug</dt>
            <dd>{s.slug}</dd>
            <dt>Version</dt>
            <dd>
              {s.version}
              {s.version !== s.latestVersion && ` (newest good: ${s.latestVersion})`}
            </dd>
            <dt>Digest</dt>
            <dd>
              <code class="digest" data-testid="digest">sha256:{s.digest}</code>
            </dd>
            <dt>Maturity</dt>
            <dd>{enumLabel(SkillMaturitySchema, s.maturity)}</dd>
            <dt>License</dt>
            <dd>{s.license ?? "—"}</dd>
            <dt>Installs · forks</dt>
            <dd>
              {s.installs} · {s.forks}
            </dd>
            <dt>Listing</dt>
            <dd>
              {enumLabel(ListingStateSchema, s.listingState)}
              {s.deprecated && " (deprecated)"}
            </dd>
            <dt>Published</dt>
            <dd>
              {when(s.publishedAt)}, updated {when(s.updatedAt)}
            </dd>
            <dt>Tags</dt>
            <dd>{s.tags.join(", ") || "—"}</dd>
          </dl>
          <h2>Lineage</h2>
          {s.lineage.length > 0 ? (
            <ol class="lineage" aria-label="Lineage, parent first">
              {s.lineage.map((l) => (
                <li key={`${l.id}-${l.version}`}>
                  fork of <a href={href("marketplace", l.id)}>{l.authorHandle}/{l.slug}</a> version {l.version}
                </li>
              ))}
            </ol>
          ) : (
            <p class="muted">An original, not a fork.</p>
          )}
          {s.yanked && (
            <p class="notice" role="status">
              Version {s.version} was yanked {when(s.yanked.at)}: {s.yanked.reason}
            </p>
          )}
          <h2>Safety scan</h2>
          <ScanFindings findings={s.findings} label={`Safety findings of version ${s.version}`} />
          <h2>Versions</h2>
          <Problem problem={versions.problem} />
          {versions.data && <VersionTable versions={versions.data} shown={s.version} onShow={setVersion} />}
          {own.data === s.authorHandle ? (
            <p class="panel" data-testid="own-listing">
              Your workspace publishes this skill: manage it on <a href={href("skills", s.id)}>its skill page</a>.
            </p>
          ) : (
            !own.loading && <ListingActions id={s.id} version={version} />
          )}
          <h2>SKILL.md</h2>
          <Markdown text={s.content} label={`${s.name} SKILL.md`} />
          {s.files.length > 0 && (
            <>
              <h2>Files</h2>
              <ul>
                {s.files.map((f) => (
                  <li key={f.path}>{f.path}</li>
                ))}
              </ul>
            </>
          )}
        </>
      )}
    </section>
  );
}

function VersionTable({ versions, shown, onShow }: { versions: MarketplaceVersion[]; shown: number; onShow(v: number): void }) {
  return (
    <ListTable label="Published versions, newest first" columns={["Version", "Published", "Review", "Findings", "Yanked", "Digest"]}>
      {versions.map((v) => (
        <tr key={v.version}>
          <td>
            {v.version === shown ? (
              <strong>{v.version}</strong>
            ) : (
              <button type="button" aria-label={`Show version ${v.version}`} onClick={() => onShow(v.version)}>
                {v.version}
              </button>
            )}
          </td>
          <td>{when(v.publishedAt)}</td>
          <td>{enumLabel(VersionReviewSchema, v.review)}</td>
          <td>{v.findings.length}</td>
          <td>{v.yanked ? `${when(v.yanked.at)}: ${v.yanked.reason}` : "—"}</td>
          <td>
            <code>{v.digest.slice(0, 12)}</code>
          </td>
        </tr>
      ))}
    </ListTable>
  );
}

function ListingActions({ id, version }: { id: string; version: number | undefined }) {
  const action = useAction();
  const [copy, setCopy] = useState<{ skill: Skill; what: string } | null>(null);
  const [fork, setFork] = useState({ slug: "", name: "" });
  const [reason, setReason] = useState<number>(ReportReason.UNSPECIFIED);
  const [message, setMessage] = useState("");
  const [report, setReport] = useState<ReportSkillResponse | null>(null);
  return (
    <section class="panel" aria-labelledby="listing-actions">
      <h2 id="listing-actions">Use it</h2>
      <div class="actions">
        <button
          type="button"
          disabled={action.busy}
          onClick={() =>
            void action.run(async () => {
              const installed = await api.marketplace.installSkill({ id, version });
              const renamed = installed.slugTaken ? ` (as ${installed.skill?.slug}: ${installed.slugTaken} was taken)` : "";
              if (installed.skill) setCopy({ skill: installed.skill, what: `${installed.created ? "Installed" : "Installed copy now holds this version:"}${renamed}` });
            })
          }
        >
          {version === undefined ? "Install" : `Install version ${version}`}
        </button>
      </div>
      <Form
        label="Fork"
        onSubmit={() =>
          void action.run(async () => {
            const forked = await api.marketplace.forkSkill({ id, slug: fork.slug || undefined, name: fork.name || undefined });
            if (forked.skill) setCopy({ skill: forked.skill, what: "Forked (public, under this skill's licence):" });
          })
        }
      >
        <TextField label="Fork slug" value={fork.slug} onInput={(slug) => setFork({ ...fork, slug })} hint="optional" />
        <TextField label="Fork name" value={fork.name} onInput={(name) => setFork({ ...fork, name })} hint="optional" />
        <div class="actions">
          <button type="submit" disabled={action.busy}>
            Fork
          </button>
        </div>
      </Form>
      {copy && (
        <p role="status">
          {copy.what} <a href={href("skills", copy.skill.id)}>{copy.skill.name}</a> in your skills.
        </p>
      )}
      <h3>Report</h3>
      <Form
        label="Report this skill"
        onSubmit={() =>
          void action.run(async () => {
            if (reason === ReportReason.UNSPECIFIED) throw new InputError("choose a reason");
            setReport(await api.marketplace.reportSkill({ id, reason, message: message || undefined }));
            setMessage("");
          })
        }
      >
        <EnumSelect label="Reason" value={reason} options={enumOptions(ReportReasonSchema)} none="(choose)" onChange={setReason} />
        <TextArea label="Report message" value={message} onInput={setMessage} />
        <div class="actions">
          <button type="submit" disabled={action.busy}>
            Report
          </button>
        </div>
      </Form>
      {report?.report && (
        <p role="status" data-testid="reported">
          {report.created ? "Reported" : "Already reported"}: report {report.report.id} is {enumLabel(ReportStatusSchema, report.report.status)}.
        </p>
      )}
      <Problem problem={action.problem} />
    </section>
  );
}
