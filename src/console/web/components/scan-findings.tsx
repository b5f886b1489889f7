import { FindingSeverity, FindingSeveritySchema, type ScanFinding } from "../../../../gen/agent/v1/skill_pb.js";
import { enumLabel } from "../format.js";
import { ListTable } from "./list-table.js";

/** A version's safety findings: rule, severity, where, and the matched text. */
export function ScanFindings({ findings, label }: { findings: ScanFinding[]; label: string }) {
  if (findings.length === 0) return <p class="muted">The safety scan found nothing.</p>;
  return (
    <ListTable label={label} columns={["Severity", "Rule", "Where", "Excerpt"]}>
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
    </ListTable>
  );
}
