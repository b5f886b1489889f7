import { useState } from "preact/hooks";
import { MarketplaceSort } from "../../../../gen/agent/v1/marketplace_pb.js";
import { api } from "../api.js";
import { Form, TextField } from "../components/fields.js";
import { Pager, usePages } from "../components/pager.js";
import { Loading, Problem } from "../components/problem.js";
import { num, when } from "../format.js";
import { href } from "../router.js";
import { useLoad } from "../use-call.js";

export function MarketplacePage() {
  const [sort, setSort] = useState(MarketplaceSort.POPULAR);
  const [draft, setDraft] = useState("");
  const [query, setQuery] = useState("");
  const pages = usePages();
  const list = useLoad(
    () =>
      api.marketplace.searchMarketplace(
        query ? { query, limit: 20, pageToken: pages.token } : { sort, limit: 20, pageToken: pages.token },
      ),
    [sort, query, pages.token],
  );
  const browse = (s: MarketplaceSort) => {
    setSort(s);
    setQuery("");
    setDraft("");
    pages.reset();
  };
  return (
    <section aria-labelledby="market-title">
      <h1 id="market-title">Marketplace</h1>
      <div class="actions" role="group" aria-label="Browse">
        <button type="button" aria-pressed={!query && sort === MarketplaceSort.POPULAR} onClick={() => browse(MarketplaceSort.POPULAR)}>
          Popular
        </button>
        <button type="button" aria-pressed={!query && sort === MarketplaceSort.NEW} onClick={() => browse(MarketplaceSort.NEW)}>
          New
        </button>
      </div>
      <Form
        label="Search the marketplace"
        onSubmit={() => {
          pages.reset();
          setQuery(draft.trim());
        }}
      >
        <TextField label="Search" type="search" value={draft} onInput={setDraft} hint="what should the skill do?" />
        <div class="actions">
          <button type="submit">Search</button>
        </div>
      </Form>
      <Problem problem={list.problem} />
      <Loading when={list.loading && !list.data} />
      {list.data && (
        <>
          <ul class="cards" aria-label="Marketplace skills">
            {list.data.skills.map((s) => (
              <li key={s.id} class="card">
                <h2>
                  <a href={href("marketplace", s.id)}>{s.name}</a>
                </h2>
                {s.forkOf && (
                  <p class="fork-of" data-testid="fork-of">
                    fork of{" "}
                    <a href={href("marketplace", s.forkOf.id)}>
                      {s.forkOf.authorHandle}/{s.forkOf.slug}
                    </a>
                  </p>
                )}
                <p class="muted">
                  by {s.authorHandle}
                  {s.verified && <span class="badge"> verified</span>} · version {s.version} · {s.installs} installs · {s.forks} forks
                  {s.findings > 0 && <> · {s.findings} safety warnings</>}
                  {s.similarity !== undefined && <> · similarity {num(s.similarity)}</>}
                </p>
                <p>{s.description}</p>
                <p class="muted">
                  {s.tags.join(", ")} {s.tags.length > 0 && "·"} published {when(s.publishedAt)}
                </p>
              </li>
            ))}
          </ul>
          {list.data.skills.length === 0 && <p class="muted">No skills found.</p>}
          <Pager pages={pages} nextToken={list.data.nextPageToken} label="Marketplace" />
        </>
      )}
    </section>
  );
}
