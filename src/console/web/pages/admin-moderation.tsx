import { useState } from "preact/hooks";
import {
  AppealStatus,
  AppealStatusSchema,
  ReportReason,
  ReportReasonSchema,
  ReportStatus,
  ReportStatusSchema,
  type Appeal,
  type Report,
} from "../../../../gen/agent/v1/marketplace_pb.js";
import { api } from "../api.js";
import { EnumSelect, Form, TextArea, TextField } from "../components/fields.js";
import { Loading, Problem } from "../components/problem.js";
import { enumLabel, enumOptions, InputError, num, when } from "../format.js";
import { useAction, useLoad, type Action } from "../use-call.js";
import { ListTable } from "../components/list-table.js";
import { ScanFindings } from "../components/scan-findings.js";

const duration = (seconds: number | undefined) =>
  seconds === undefined ? "—" : seconds < 3600 ? `${num(seconds / 60, 1)} min` : `${num(seconds / 3600, 1)} h`;

export function AdminModeration() {
  const [reportStatus, setReportStatus] = useState<number>(ReportStatus.OPEN);
  const [appealStatus, setAppealStatus] = useState<number>(AppealStatus.PENDING);
  const [round, setRound] = useState(0);
  const loaded = useLoad(async () => {
    const [stats, reports, appeals, actions, held] = await Promise.all([
      api.moderation.getModerationStats({}),
      api.moderation.listReports({ status: reportStatus, pageSize: 100 }),
      api.moderation.listAppeals({ status: appealStatus, pageSize: 100 }),
      api.moderation.listModerationActions({ pageSize: 20 }),
      api.moderation.listHeldVersions({}),
    ]);
    return { stats, reports: reports.reports, moreReports: !!reports.nextPageToken, appeals: appeals.appeals, actions: actions.actions, held: held.held };
  }, [reportStatus, appealStatus, round]);
  const action = useAction();
  // Every decision changes the queues and the stats: all are read again.
  const decide = (fn: () => Promise<unknown>) => void action.run(async () => (await fn(), setRound((r) => r + 1)));
  const d = loaded.data;
  const byReason = new Map<number, Report[]>();
  for (const r of d?.reports ?? []) byReason.set(r.reason, [...(byReason.get(r.reason) ?? []), r]);

  return (
    <>
      <Problem problem={loaded.problem} />
      <Problem problem={action.problem} />
      <Loading when={loaded.loading && !d} />
      {d && (
        <>
          <h2>Stats</h2>
          <div class="two-up">
            <table class="list" aria-label="Reports by reason">
              <thead>
                <tr>
                  <th scope="col">Reason</th>
                  <th scope="col">Open</th>
                  <th scope="col">Actioned</th>
                  <th scope="col">Dismissed</th>
                </tr>
              </thead>
              <tbody>
                {d.stats.reports.map((r) => (
                  <tr key={r.reason} data-reason={r.reason}>
                    <th scope="row">{r.reason}</th>
                    <td>{r.open}</td>
                    <td>{r.actioned}</td>
                    <td>{r.dismissed}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <table class="kv" aria-label="Moderation totals">
              <tbody>
                <tr>
                  <th scope="row">Takedowns</th>
                  <td data-testid="takedowns">{d.stats.takedowns}</td>
                </tr>
                <tr>
                  <th scope="row">Appeals pending · granted · denied</th>
                  <td data-testid="appeal-counts">
                    {d.stats.appealsPending} · {d.stats.appealsGranted} · {d.stats.appealsDenied}
                  </td>
                </tr>
                <tr>
                  <th scope="row">Median report to decision</th>
                  <td>{duration(d.stats.medianReportDecisionSeconds)}</td>
                </tr>
                <tr>
                  <th scope="row">Median appeal to decision</th>
                  <td>{duration(d.stats.medianAppealDecisionSeconds)}</td>
                </tr>
              </tbody>
            </table>
          </div>

          <h2>Reports</h2>
          <div class="form">
            <EnumSelect label="Report status" value={reportStatus} options={enumOptions(ReportStatusSchema)} none="any" onChange={setReportStatus} />
          </div>
          {d.reports.length === 0 && <p class="muted">No reports.</p>}
          {[...byReason].map(([reason, reports]) => (
            <section key={reason} class="reason-group" aria-label={`Reports for ${enumLabel(ReportReasonSchema, reason)}`}>
              <h3>
                {enumLabel(ReportReasonSchema, reason)} ({reports.length})
              </h3>
              <ul class="cards">
                {reports.map((r) => (
                  <ReportCard key={r.id} report={r} action={action} decide={decide} />
                ))}
              </ul>
            </section>
          ))}
          {d.moreReports && <p class="muted">Showing the oldest 100.</p>}

          <h2>Appeals</h2>
          <div class="form">
            <EnumSelect label="Appeal status" value={appealStatus} options={enumOptions(AppealStatusSchema)} none="any" onChange={setAppealStatus} />
          </div>
          {d.appeals.length === 0 && <p class="muted">No appeals.</p>}
          <ul class="cards" aria-label="Appeals">
            {d.appeals.map((a) => (
              <AppealCard key={a.id} appeal={a} action={action} decide={decide} />
            ))}
          </ul>

          <h2>Held by the safety scan</h2>
          {d.held.length === 0 && <p class="muted">No version waits for review.</p>}
          <ul class="cards" aria-label="Versions held for review">
            {d.held.map((h) => (
              <li key={`${h.skillId}-${h.version?.version}`} class="card">
                <p>
                  {h.authorHandle}/{h.slug} version {h.version?.version} ({h.skillId}), published {when(h.version?.publishedAt)}
                </p>
                <ScanFindings findings={h.version?.findings ?? []} label={`Findings of ${h.slug} version ${h.version?.version}`} />
                <div class="actions">
                  <button type="button" disabled={action.busy} onClick={() => decide(() => api.moderation.clearSkillVersion({ id: h.skillId, version: h.version!.version }))}>
                    Clear version {h.version?.version}
                  </button>
                </div>
              </li>
            ))}
          </ul>

          <h2>Take down a skill</h2>
          <Takedown action={action} decide={decide} />

          <h2>Recent actions</h2>
          <ListTable label="Moderation actions" columns={["When", "Action", "Skill", "Reason", "Note", "By"]}>
            {d.actions.map((a) => (
              <tr key={a.id}>
                <td class="nowrap">{when(a.createdAt)}</td>
                <td>{a.action}</td>
                <td>{a.skillId}</td>
                <td>{enumLabel(ReportReasonSchema, a.reason)}</td>
                <td class="content-cell">{a.note ?? ""}</td>
                <td>{a.actor}</td>
              </tr>
            ))}
          </ListTable>
        </>
      )}
    </>
  );
}

type Decide = (fn: () => Promise<unknown>) => void;

function ReportCard({ report: r, action, decide }: { report: Report; action: Action; decide: Decide }) {
  const [reason, setReason] = useState<number>(r.reason);
  const [details, setDetails] = useState("");
  const [note, setNote] = useState("");
  const open = r.status === ReportStatus.OPEN;
  return (
    <li class="card" data-report={r.id}>
      <p>
        Skill <strong>{r.skillId}</strong> reported by {r.reporterWorkspace ?? "?"} on {when(r.createdAt)} ·{" "}
        <span class="badge">{enumLabel(ReportStatusSchema, r.status)}</span>
      </p>
      {r.message && <blockquote>{r.message}</blockquote>}
      {r.resolutionNote && <p class="muted">Note: {r.resolutionNote}</p>}
      {open && (
        <div class="two-up">
          <Form label={`Take down ${r.skillId}`} onSubmit={() => decide(() => api.moderation.takedownSkill({ id: r.skillId, reason, details: details || undefined }))}>
            <EnumSelect label="Takedown reason" value={reason} options={enumOptions(ReportReasonSchema)} none="(choose)" onChange={setReason} />
            <TextArea label="Takedown details" value={details} onInput={setDetails} hint="sent to the author" />
            <div class="actions">
              <button type="submit" class="danger" disabled={action.busy}>
                Take down
              </button>
            </div>
          </Form>
          <Form label={`Dismiss report ${r.id}`} onSubmit={() => decide(() => api.moderation.dismissReport({ id: r.id, note: note || undefined }))}>
            <TextArea label="Dismissal note" value={note} onInput={setNote} />
            <div class="actions">
              <button type="submit" disabled={action.busy}>
                Dismiss
              </button>
            </div>
          </Form>
        </div>
      )}
    </li>
  );
}

function AppealCard({ appeal: a, action, decide }: { appeal: Appeal; action: Action; decide: Decide }) {
  const [note, setNote] = useState("");
  const pending = a.status === AppealStatus.PENDING;
  return (
    <li class="card" data-appeal={a.id}>
      <p>
        Skill <strong>{a.skillId}</strong> appealed by {a.workspace ?? "?"} on {when(a.createdAt)} ·{" "}
        <span class="badge" data-testid="appeal-status">
          {enumLabel(AppealStatusSchema, a.status)}
        </span>
      </p>
      <blockquote>{a.message}</blockquote>
      {a.decisionNote && <p class="muted">Note: {a.decisionNote}</p>}
      {pending && (
        <Form label={`Decide appeal ${a.id}`} onSubmit={() => undefined}>
          <TextArea label="Decision note" value={note} onInput={setNote} hint="sent to the author" />
          <div class="actions">
            <button type="button" disabled={action.busy} onClick={() => decide(() => api.moderation.grantAppeal({ id: a.id, note: note || undefined }))}>
              Grant
            </button>
            <button type="button" class="danger" disabled={action.busy} onClick={() => decide(() => api.moderation.denyAppeal({ id: a.id, note: note || undefined }))}>
              Deny
            </button>
          </div>
        </Form>
      )}
    </li>
  );
}

function Takedown({ action, decide }: { action: Action; decide: Decide }) {
  const [id, setId] = useState("");
  const [reason, setReason] = useState<number>(ReportReason.UNSPECIFIED);
  const [details, setDetails] = useState("");
  return (
    <Form
      label="Take down a skill"
      onSubmit={() =>
        decide(async () => {
          if (reason === ReportReason.UNSPECIFIED) throw new InputError("choose a reason");
          await api.moderation.takedownSkill({ id: id.trim(), reason, details: details || undefined });
          setId("");
          setDetails("");
        })
      }
    >
      <TextField label="Skill id" value={id} onInput={setId} required />
      <EnumSelect label="Reason" value={reason} options={enumOptions(ReportReasonSchema)} none="(choose)" onChange={setReason} />
      <TextArea label="Details" value={details} onInput={setDetails} />
      <div class="actions">
        <button type="submit" class="danger" disabled={action.busy}>
          Take down
        </button>
      </div>
    </Form>
  );
}
