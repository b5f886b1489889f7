import { useState } from "preact/hooks";
import type { ImportSkillResponse } from "../../../../gen/agent/v1/skill_pb.js";
import { api } from "../api.js";
import { InputError } from "../format.js";
import { href } from "../router.js";
import { useAction } from "../use-call.js";
import { Problem } from "./problem.js";
import { fromDrop, fromFolderInput, skillUpload, type PickedFile } from "./skill-files.js";

/** Import by dropping a SKILL.md or a skill folder on the zone, or picking either with the keyboard. */
export function SkillImport({ onImported }: { onImported(): void }) {
  const [over, setOver] = useState(false);
  const [result, setResult] = useState<ImportSkillResponse | null>(null);
  const action = useAction();
  const importPicked = (picked: Promise<PickedFile[]>) =>
    action.run(async () => {
      let upload;
      try {
        upload = await skillUpload(await picked);
      } catch (err) {
        throw new InputError((err as Error).message);
      }
      setResult(await api.skills.importSkill(upload));
      onImported();
    });
  return (
    <section class="panel" aria-labelledby="import-title">
      <h2 id="import-title">Import a skill</h2>
      <div
        class={`dropzone${over ? " over" : ""}`}
        onDragOver={(e) => {
          e.preventDefault();
          setOver(true);
        }}
        onDragLeave={() => setOver(false)}
        onDrop={(e) => {
          e.preventDefault();
          setOver(false);
          if (e.dataTransfer) void importPicked(fromDrop(e.dataTransfer));
        }}
      >
        <p>Drop a SKILL.md file or a skill folder here, or choose one:</p>
        <label class="file-pick">
          <span>SKILL.md file</span>
          <input
            type="file"
            accept=".md,text/markdown"
            disabled={action.busy}
            onChange={(e) => {
              const file = e.currentTarget.files?.[0];
              e.currentTarget.value = "";
              if (file) void importPicked(Promise.resolve([{ path: "SKILL.md", file }]));
            }}
          />
        </label>
        <label class="file-pick">
          <span>Skill folder</span>
          <input
            type="file"
            ref={(el) => el?.setAttribute("webkitdirectory", "")}
            disabled={action.busy}
            onChange={(e) => {
              const files = e.currentTarget.files;
              if (files) void importPicked(Promise.resolve(fromFolderInput(files)));
              e.currentTarget.value = "";
            }}
          />
        </label>
      </div>
      <Problem problem={action.problem} />
      {action.busy && <p aria-live="polite">Importing…</p>}
      {result?.skill && (
        <div class="result" role="status">
          <p>
            {result.created ? "Imported" : `Updated to version ${result.skill.version}:`} <a href={href("skills", result.skill.id)}>{result.skill.name}</a>{" "}
            <span class="muted">({result.skill.slug})</span>
          </p>
          {result.warnings.length > 0 && (
            <ul aria-label="Import warnings">
              {result.warnings.map((w, i) => (
                <li key={i}>
                  {w.field}: {w.message}
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
    </section>
  );
}
