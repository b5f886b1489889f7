import type { Memory } from "../../../../gen/agent/v1/memory_pb.js";
import { MemoryTypeSchema } from "../../../../gen/agent/v1/memory_pb.js";
import { enumLabel, num } from "../format.js";
import { wordDiff } from "./diff.js";

// What changed between two versions of a memory: the content word by word, then every other field that differs.

const fieldsOf = (m: Memory): Array<[string, string]> => [
  ["type", enumLabel(MemoryTypeSchema, m.type)],
  ["containers", m.containers.join(", ")],
  ["tags", m.tags.join(", ")],
  ["confidence", num(m.confidence)],
  ["valid from", m.validFrom],
  ["valid until", m.validUntil ?? "—"],
  ["metadata", JSON.stringify(m.metadata ?? {})],
];

export function VersionDiff({ from, to }: { from: Memory; to: Memory }) {
  const parts = wordDiff(from.content, to.content);
  const before = fieldsOf(from);
  const changed = fieldsOf(to).filter(([name, value], i) => before[i]![0] === name && before[i]![1] !== value);
  return (
    <div class="diff" aria-label={`Changes from version ${from.version} to version ${to.version}`}>
      <p class="diff-text">
        {parts.map((p, i) =>
          p.kind === "same" ? (
            <span key={i}>{p.text}</span>
          ) : p.kind === "removed" ? (
            <del key={i}>{p.text}</del>
          ) : (
            <ins key={i}>{p.text}</ins>
          ),
        )}
      </p>
      {changed.length > 0 ? (
        <table class="kv">
          <tbody>
            {changed.map(([name, value]) => (
              <tr key={name}>
                <th scope="row">{name}</th>
                <td>
                  <del>{before.find(([n]) => n === name)?.[1] ?? ""}</del> → <ins>{value}</ins>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p class="muted">No other field changed.</p>
      )}
    </div>
  );
}
