import { FindingSeverity, FindingSeveritySchema, type ScanFinding } from "../../../../gen/agent/v1/skill_pb.js";
import { enumLabel } from "../format.js";

/** A version's safety findings: rule, severity, where, and the matched text. */
export function ScanFindings({ findings, label }: { findings: ScanFinding[]; label: string }) {
  if (findings.length === 0) return <p class="muted">The safety scan found nothing.</p>;
  return (
    <div class="table-scroll">
      <table class="list" aria-label={label}>
        <thead>
          <tr>
            <th scope="col">Severity</th>
            <th scope="col">Rule</th>
            <th scope="col">Where</th>
            <th scope="col">Excerpt</th>
          </tr>
        </thead>
        <tbody>
          {findings.map((f) => (
            <tr key={`${f.rule}-${f.file}-${f.line}`} class={f.severity === FindingSeverity.CRITICAL ? "critical" : undefined}>
              <td>{enumLabel(FindingSeveritySchema, f.severity)}</td>
              <td title={f.message}>{f.rule}</td>
              <td>
                {f.file}:{f.line}
              </td>
              <td>
                <code>{f.excerpt}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
