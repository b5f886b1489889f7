import { useState } from "preact/hooks";
import {
  ListingStateSchema,
  SkillMaturitySchema,
  SkillSourceSchema,
  SkillState,
  SkillStateSchema,
  SkillVisibilitySchema,
  type Skill,
} from "../../../../gen/agent/v1/skill_pb.js";
import { SearchModeSchema } from "../../../../gen/agent/v1/recall_pb.js";
import { api } from "../api.js";
import { Checkbox, EnumSelect, Form, TextField } from "../components/fields.js";
import { Pager, usePages } from "../components/pager.js";
import { Loading, Problem } from "../components/problem.js";
import { SkillImport } from "../components/skill-import.js";
import { enumLabel, enumOptions, num, when } from "../format.js";
import { href } from "../router.js";
import { useLoad } from "../use-call.js";
import { ListTable } from "../components/list-table.js";

interface Filters {
  query: string;
  mode: number;
  visibility: number;
  source: number;
  includeDeprecated: boolean;
}

const none: Filters = { query: "", mode: 0, visibility: 0, source: 0, includeDeprecated: false };

export function SkillsPage() {
  const [draft, setDraft] = useState(none);
  const [filters, setFilters] = useState(none);
  const pages = usePages();
  // A query searches (best first); without one the library is listed newest first, in pages.
  const list = useLoad(async (): Promise<{ skills: Skill[]; nextPageToken?: string }> => {
    if (filters.query.trim()) {
      return api.skills.searchSkills({ query: filters.query, searchMode: filters.mode, includeDeprecated: filters.includeDeprecated, limit: 20 });
    }
    return api.skills.listSkills({
      visibility: filters.visibility ? [filters.visibility] : [],
      source: filters.source ? [filters.source] : [],
      includeDeprecated: filters.includeDeprecated,
      pageSize: 20,
      pageToken: pages.token,
    });
  }, [filters, pages.token]);
  const set = (patch: Partial<Filters>) => setDraft({ ...draft, ...patch });
  const searching = filters.query.trim() !== "";
  return (
    <section aria-labelledby="skills-title">
      <h1 id="skills-title">Skills</h1>
      <SkillImport
        onImported={() => {
          pages.reset();
          list.reload();
        }}
      />
      <Form
        label="Find skills"
        onSubmit={() => {
          pages.reset();
          setFilters(draft);
        }}
      >
        <TextField label="Search" type="search" value={draft.query} onInput={(query) => set({ query })} hint="by meaning and keywords; empty lists every skill" />
        <EnumSelect label="Mode" value={draft.mode} options={enumOptions(SearchModeSchema)} none="default (hybrid)" onChange={(mode) => set({ mode })} />
        <EnumSelect label="Visibility" value={draft.visibility} options={enumOptions(SkillVisibilitySchema)} none="any" onChange={(visibility) => set({ visibility })} />
        <EnumSelect label="Source" value={draft.source} options={enumOptions(SkillSourceSchema)} none="any" onChange={(source) => set({ source })} />
        <Checkbox label="Include deprecated" checked={draft.includeDeprecated} onChange={(includeDeprecated) => set({ includeDeprecated })} />
        <div class="actions">
          <button type="submit">{draft.query.trim() ? "Search" : "List"}</button>
        </div>
      </Form>
      <Problem problem={list.problem} />
      <Loading when={list.loading && !list.data} />
      {list.data && (
        <>
          <ListTable label="Skills" columns={["Name", "Description", "Version", "Maturity", "Visibility", "Source", searching ? "Similarity" : "Updated"]}>
            {list.data.skills.map((s) => (
              <tr key={s.id}>
                <td>
                  <a href={href("skills", s.id)}>{s.name}</a>
                  <div class="muted">{s.slug}</div>
                </td>
                <td class="content-cell">{s.description}</td>
                <td>{s.version}</td>
                <td>{enumLabel(SkillMaturitySchema, s.maturity)}</td>
                <td>
                  {enumLabel(SkillVisibilitySchema, s.visibility)}
                  {s.listingState !== undefined && <div class="muted">{enumLabel(ListingStateSchema, s.listingState)}</div>}
                  {s.state === SkillState.DEPRECATED && <div class="muted">{enumLabel(SkillStateSchema, s.state)}</div>}
                </td>
                <td>{enumLabel(SkillSourceSchema, s.source)}</td>
                <td class="nowrap">{searching ? num(s.similarity ?? 0) : when(s.updatedAt)}</td>
              </tr>
            ))}
          </ListTable>
          {list.data.skills.length === 0 && <p class="muted">No skills.</p>}
          {!searching && <Pager pages={pages} nextToken={list.data.nextPageToken} label="Skills" />}
        </>
      )}
    </section>
  );
}
