import { useState } from "preact/hooks";
import type { Skill, UpgradeSkillResponse } from "../../../../gen/agent/v1/skill_pb.js";
import { api } from "../api.js";
import { Form, TextArea, TextField } from "./fields.js";
import { Problem } from "./problem.js";
import { InputError, when } from "../format.js";
import { useAction } from "../use-call.js";

/** An installed copy: the version and digest it holds, a yank of it, and an upgrade previewed as a diff. */
export function InstalledCopyPanel({ skill, onChanged }: { skill: Skill; onChanged(): void }) {
  const action = useAction();
  const [preview, setPreview] = useState<UpgradeSkillResponse | null>(null);
  const from = skill.installedFrom!;
  const target = skill.yanked?.moveTo ?? skill.updateAvailable;
  return (
    <section class="panel" aria-labelledby="installed-title">
      <h3 id="installed-title">Installed copy</h3>
      <p>
        Holds version {from.version}, digest <code class="digest" data-testid="installed-digest">sha256:{from.digest}</code>. It is read-only and never changes
        by itself.
      </p>
      {skill.yanked && (
        <p class="notice" role="status" data-testid="yanked">
          This version was yanked {when(skill.yanked.at)}: {skill.yanked.reason}
          {skill.yanked.moveTo ? ` Move to version ${skill.yanked.moveTo.version}.` : " No good version is left."}
        </p>
      )}
      {skill.updateAvailable && <p data-testid="update-available">Version {skill.updateAvailable.version} is available.</p>}
      {target && (
        <div class="actions">
          <button type="button" disabled={action.busy} onClick={() => void action.run(async () => setPreview(await api.skills.upgradeSkill({ id: skill.id, version: target.version, dryRun: true })))}>
            Preview upgrade to version {target.version}
          </button>
          <button
            type="button"
            disabled={action.busy}
            onClick={() => void action.run(async () => (await api.skills.upgradeSkill({ id: skill.id, version: target.version }), setPreview(null), onChanged()))}
          >
            Upgrade to version {target.version}
          </button>
        </div>
      )}
      {preview && (
        <>
          <p>
            {preview.changes.length === 0 ? "No frontmatter field changes." : `Changes ${preview.changes.map((c) => c.field).join(", ")}.`}
          </p>
          <pre class="json" aria-label="Upgrade diff">{preview.diff || "The body and files are the same."}</pre>
        </>
      )}
      <Problem problem={action.problem} />
    </section>
  );
}

/** The author withdraws one published version of their public skill. */
export function YankForm({ skill }: { skill: Skill }) {
  const action = useAction();
  const [version, setVersion] = useState(String(skill.version));
  const [reason, setReason] = useState("");
  const [done, setDone] = useState<string | null>(null);
  return (
    <Form
      label="Yank a published version"
      onSubmit={() =>
        void action.run(async () => {
          const n = Number(version);
          if (!Number.isInteger(n) || n < 1) throw new InputError("version must be a whole number from 1");
          const yanked = await api.skills.yankSkill({ id: skill.id, version: n, reason });
          setDone(`Version ${yanked.version} yanked; ${yanked.installedCopies} installed copies show it.`);
        })
      }
    >
      <TextField label="Version to yank" value={version} onInput={setVersion} />
      <TextArea label="Why (installers see it)" value={reason} onInput={setReason} required />
      <div class="actions">
        <button type="submit" disabled={action.busy}>
          Yank
        </button>
      </div>
      {done && <p role="status">{done}</p>}
      <Problem problem={action.problem} />
    </Form>
  );
}
