import type { Database } from "./database.js";

/**
 * Contents without a letter or digit ("???") normalised to "" and so all shared one content hash
 * (sha256 of ""); their key is now the content trimmed of what String.prototype.trim removes
 * (duplicateKey in src/recall/scoring.ts), listed here. Exported for the test that checks both agree.
 */
export const rehashContentWithoutWordsSql = `update memories
  set content_hash = encode(sha256(convert_to(btrim(content,
    E'\\u0009\\u000a\\u000b\\u000c\\u000d\\u0020\\u00a0\\u1680\\u2000\\u2001\\u2002\\u2003\\u2004\\u2005\\u2006\\u2007\\u2008\\u2009\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff'),
    'UTF8')), 'hex')
  where content_hash = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'`;

// Forward-only. Never edit a migration that has shipped: append a new one. Versions are applied in
// list order and each at most once, so a version merged later (a gap filled) still runs.
// Each migration is a list of single statements (PGlite's extended protocol runs one at a time).
const migrations: ReadonlyArray<{ version: number; name: string; statements: string[] }> = [
  {
    version: 1,
    name: "accounts and memories",
    statements: [
      `create table workspaces (
        id text primary key,
        name text not null unique,
        created_at timestamptz not null default now()
      )`,
      `create table api_keys (
        id text primary key,
        workspace_id text references workspaces (id) on delete cascade,
        container text,
        role text not null check (role in ('agent', 'admin')),
        name text not null default '',
        secret_hash bytea not null unique,
        prefix text not null,
        created_at timestamptz not null default now(),
        expires_at timestamptz,
        revoked_at timestamptz,
        last_rotated_at timestamptz,
        check ((role = 'admin') = (workspace_id is null))
      )`,
      `create index api_keys_by_workspace on api_keys (workspace_id, created_at desc)`,
      `create table memories (
        id text primary key,
        workspace_id text not null references workspaces (id) on delete cascade,
        content text not null,
        type text not null,
        containers text[] not null check (cardinality(containers) > 0),
        tags text[] not null default '{}',
        source text not null,
        valid_from timestamptz not null,
        valid_until timestamptz,
        metadata jsonb not null default '{}',
        confidence double precision not null check (confidence >= 0 and confidence <= 1),
        version integer not null,
        key_id text not null,
        created_at timestamptz not null,
        updated_at timestamptz not null
      )`,
      `create index memories_by_workspace on memories (workspace_id, id)`,
      `create index memories_by_container on memories using gin (containers)`,
      `create table memory_versions (
        memory_id text not null references memories (id) on delete cascade,
        version integer not null,
        content text not null,
        type text not null,
        containers text[] not null,
        tags text[] not null,
        source text not null,
        valid_from timestamptz not null,
        valid_until timestamptz,
        metadata jsonb not null,
        confidence double precision not null,
        key_id text not null,
        created_at timestamptz not null,
        primary key (memory_id, version)
      )`,
    ],
  },
  {
    version: 2,
    name: "recall: severity, state, full-text search, index outbox, traces",
    statements: [
      `alter table memories add column severity text check (severity in ('low', 'medium', 'high', 'critical'))`,
      `alter table memory_versions add column severity text`,
      `alter table memories add column state text not null default 'active' check (state in ('active', 'shadowed'))`,
      `alter table memories add column tsv tsvector generated always as (to_tsvector('english', content)) stored`,
      `create index memories_fts on memories using gin (tsv)`,
      // Memories whose vector must be (re)computed or removed; written in the same transaction as the memory.
      `create table index_outbox (
        seq bigserial primary key,
        memory_id text not null,
        enqueued_at timestamptz not null default now()
      )`,
      // The embedding model the vector index was built with; a change needs `agentmem reindex`.
      `create table vector_index_state (
        id integer primary key check (id = 1),
        provider text not null,
        model text not null,
        dimensions integer not null,
        backend text not null,
        status text not null check (status in ('ready', 'reindexing')),
        updated_at timestamptz not null default now()
      )`,
      `create table recall_traces (
        id text primary key,
        workspace_id text not null references workspaces (id) on delete cascade,
        key_id text not null,
        containers text[] not null,
        query text not null,
        request jsonb not null,
        candidates jsonb not null,
        returned_ids text[] not null,
        receipt jsonb not null,
        meta jsonb not null,
        embed_ms double precision not null,
        created_at timestamptz not null
      )`,
      `create index recall_traces_by_time on recall_traces (workspace_id, created_at desc, id desc)`,
      `create index recall_traces_by_container on recall_traces using gin (containers)`,
    ],
  },
  {
    version: 3,
    name: "contradictions: shadowing, duplicate detection, idempotent creates",
    statements: [
      `alter table memories add column superseded_by text`,
      `alter table memories add column superseded_at timestamptz`,
      `create index memories_superseded_by on memories (superseded_by) where superseded_by is not null`,
      // sha256 of the normalised content (src/memories/content-hash.ts), for duplicate detection by index.
      `alter table memories add column content_hash text`,
      // The same normalisation in SQL, for ASCII texts only: Postgres' regex classes depend on the locale
      // beyond ASCII. Older non-ASCII memories are not matched as duplicates until they are edited.
      `update memories set content_hash = encode(sha256(convert_to(
         btrim(regexp_replace(replace(lower(content), '''', ''), '[^a-z0-9]+', ' ', 'g')), 'UTF8')), 'hex')
       where content ~ '^[ -~\\t\\n\\r]*$'`,
      `create index memories_by_content_hash on memories (workspace_id, content_hash) where state = 'active'`,
      // A create's response by (API key, Idempotency-Key), kept 24 hours.
      `create table idempotency_keys (
        key_id text not null,
        idempotency_key text not null,
        workspace_id text not null references workspaces (id) on delete cascade,
        request_hash text not null,
        response jsonb,
        created_at timestamptz not null default now(),
        primary key (key_id, idempotency_key)
      )`,
      `create index idempotency_keys_by_time on idempotency_keys (created_at)`,
    ],
  },
  {
    version: 4,
    name: "usage: plans, quota counters, rate-limit overrides and buckets",
    statements: [
      // Null: the server's DEFAULT_PLAN.
      `alter table workspaces add column plan text`,
      `alter table api_keys add column rate_limits jsonb`,
      `create table workspace_usage (
        workspace_id text primary key references workspaces (id) on delete cascade,
        memories_stored bigint not null default 0 check (memories_stored >= 0)
      )`,
      `insert into workspace_usage (workspace_id, memories_stored)
       select workspace_id, count(*) from memories group by workspace_id`,
      // Counters of one monthly period (period_start: the first day of the month, UTC).
      `create table usage_periods (
        workspace_id text not null references workspaces (id) on delete cascade,
        period_start date not null,
        recalls bigint not null default 0,
        cost_units bigint not null default 0,
        primary key (workspace_id, period_start)
      )`,
      // Token buckets of RATE_LIMIT_STORE=postgres; at is seconds since the epoch on the database clock.
      `create table rate_limit_buckets (
        bucket text primary key,
        sustained double precision not null,
        peak double precision not null,
        at double precision not null,
        admitted boolean not null
      )`,
    ],
  },
  {
    version: 5,
    name: "nodes: one index maintainer, the LanceDB location the index lives in",
    statements: [
      // The node that creates and optimises the search indexes (src/search/maintainer-lease.ts).
      `create table index_maintainer (
        id integer primary key check (id = 1),
        holder text not null,
        expires_at timestamptz not null
      )`,
      // Where the LanceDB index of this database lives: a resolved directory or an object store URI;
      // 'ephemeral' for a per-process temporary directory; null until a LanceDB node records it.
      `alter table vector_index_state add column lance_location text`,
    ],
  },
  {
    version: 6,
    name: "skills: the skill library, its versions, its index outbox and usage counter",
    statements: [
      // The current version of each skill. Empty containers: workspace-wide.
      `create table skills (
        id text primary key,
        workspace_id text not null references workspaces (id) on delete cascade,
        slug text not null,
        name text not null,
        description text not null,
        content text not null,
        tags text[] not null default '{}',
        containers text[] not null default '{}',
        maturity text not null check (maturity in ('experimental', 'beta', 'stable')),
        visibility text not null check (visibility in ('private', 'public')),
        source text not null check (source in ('authored', 'imported', 'installed', 'forked')),
        state text not null check (state in ('active', 'deprecated')),
        deprecated_at timestamptz,
        deprecation_message text,
        replaced_by text,
        license text,
        compatibility text,
        allowed_tools text[] not null default '{}',
        metadata jsonb not null default '{}',
        extra_frontmatter jsonb not null default '{}',
        version integer not null,
        key_id text not null,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        tsv tsvector generated always as (to_tsvector('english', name || ' ' || description)) stored
      )`,
      `create unique index skills_by_slug on skills (workspace_id, slug)`,
      `create index skills_by_workspace on skills (workspace_id, id desc)`,
      `create index skills_fts on skills using gin (tsv)`,
      // Every version, in full, with its bundled files (at most 4 MiB per version).
      `create table skill_versions (
        skill_id text not null references skills (id) on delete cascade,
        version integer not null,
        slug text not null,
        name text not null,
        description text not null,
        content text not null,
        tags text[] not null,
        containers text[] not null,
        maturity text not null,
        license text,
        compatibility text,
        allowed_tools text[] not null,
        metadata jsonb not null,
        extra_frontmatter jsonb not null,
        files jsonb not null,
        key_id text not null,
        created_at timestamptz not null,
        primary key (skill_id, version)
      )`,
      // Skills whose vector must be (re)computed; written in the same transaction as the skill.
      `create table skill_index_outbox (
        seq bigserial primary key,
        skill_id text not null,
        enqueued_at timestamptz not null default now()
      )`,
      `alter table workspace_usage add column skills_stored bigint not null default 0 check (skills_stored >= 0)`,
    ],
  },
  {
    version: 7,
    name: "stored token counts; content hashes of contents without letters or digits",
    statements: [
      // cl100k_base tokens of each version's content (src/recall/tokens.ts), so recall never re-counts;
      // null for versions written before, which recall counts when it returns them.
      `alter table memories add column content_tokens integer`,
      `alter table memory_versions add column content_tokens integer`,
      rehashContentWithoutWordsSql,
    ],
  },
  {
    version: 8,
    name: "marketplace: listings, author profiles, installs, forks, reports, appeals, moderation actions",
    statements: [
      // Where a skill came from: a fork's parent and ancestors (immutable), an installed copy's original.
      `alter table skills add column fork_of text`,
      `alter table skills add column lineage jsonb not null default '[]'`,
      `alter table skills add column installed_from text`,
      `alter table skills add column installed_version integer`,
      // One installed copy per workspace and original: installing again updates it.
      `create unique index skills_installed_once on skills (workspace_id, installed_from) where installed_from is not null`,
      `create table author_profiles (
        workspace_id text primary key references workspaces (id) on delete cascade,
        handle text not null unique,
        email text,
        updated_at timestamptz not null default now()
      )`,
      // A skill's marketplace listing; `version` is the published version that get, install and fork serve.
      `create table marketplace_listings (
        skill_id text primary key references skills (id) on delete cascade,
        workspace_id text not null,
        status text not null check (status in ('listed', 'unlisted', 'removed')),
        version integer not null,
        first_published_at timestamptz not null,
        published_at timestamptz not null,
        installs integer not null default 0,
        forks integer not null default 0,
        popularity double precision not null default 0,
        removed_at timestamptz
      )`,
      `create index marketplace_listings_popular on marketplace_listings (popularity desc, skill_id desc) where status = 'listed'`,
      `create index marketplace_listings_new on marketplace_listings (first_published_at desc, skill_id desc) where status = 'listed'`,
      // The terms version accepted with each published version and each fork.
      `create table marketplace_publications (
        skill_id text not null references skills (id) on delete cascade,
        version integer not null,
        kind text not null check (kind in ('publish', 'fork')),
        terms_version text not null,
        key_id text not null,
        published_at timestamptz not null,
        primary key (skill_id, version)
      )`,
      // Distinct installing workspaces.
      `create table marketplace_installs (
        skill_id text not null references skills (id) on delete cascade,
        workspace_id text not null references workspaces (id) on delete cascade,
        installed_at timestamptz not null,
        primary key (skill_id, workspace_id)
      )`,
      `create table marketplace_reports (
        id text primary key,
        skill_id text not null references skills (id) on delete cascade,
        reporter_workspace_id text not null references workspaces (id) on delete cascade,
        reporter_key_id text not null,
        reason text not null check (reason in ('spam', 'malware', 'copyright', 'illegal', 'impersonation', 'other')),
        message text,
        status text not null check (status in ('open', 'actioned', 'dismissed')),
        created_at timestamptz not null,
        resolved_at timestamptz,
        resolved_by text,
        resolution_note text
      )`,
      `create unique index marketplace_reports_open_once on marketplace_reports (skill_id, reporter_workspace_id) where status = 'open'`,
      `create index marketplace_reports_by_status on marketplace_reports (status, id)`,
      `create table marketplace_appeals (
        id text primary key,
        skill_id text not null references skills (id) on delete cascade,
        workspace_id text not null references workspaces (id) on delete cascade,
        key_id text not null,
        message text not null,
        status text not null check (status in ('pending', 'granted', 'denied')),
        created_at timestamptz not null,
        decided_at timestamptz,
        decided_by text,
        decision_note text
      )`,
      // Spec section 8: one pending appeal per owner.
      `create unique index marketplace_appeals_pending_once on marketplace_appeals (workspace_id) where status = 'pending'`,
      `create index marketplace_appeals_by_owner on marketplace_appeals (workspace_id, created_at)`,
      `create index marketplace_appeals_by_status on marketplace_appeals (status, id)`,
      `create table moderation_actions (
        id text primary key,
        action text not null check (action in ('takedown', 'dismiss', 'grant', 'deny')),
        skill_id text not null references skills (id) on delete cascade,
        report_id text,
        appeal_id text,
        reason text,
        note text,
        actor text not null,
        created_at timestamptz not null
      )`,
      `create index moderation_actions_by_skill on moderation_actions (skill_id, id)`,
    ],
  },
  {
    version: 9,
    name: "email outbox",
    statements: [
      // Author notices, written in the transaction of the action they report and sent in the background.
      `create table email_outbox (
        id text primary key,
        to_address text not null,
        subject text not null,
        body text not null,
        kind text not null,
        skill_id text not null,
        status text not null check (status in ('unsent', 'sent', 'failed')),
        attempts integer not null default 0,
        next_attempt_at timestamptz not null,
        last_error text,
        created_at timestamptz not null,
        sent_at timestamptz
      )`,
      `create index email_outbox_due on email_outbox (next_attempt_at) where status = 'unsent'`,
      `create index email_outbox_by_status on email_outbox (status, id)`,
    ],
  },
  {
    version: 10,
    name: "memory listing and metadata queries; vectors of writes not indexed yet",
    statements: [
      // Newest-first listing with keyset pagination (scanned backwards) and creation-time windows.
      `create index memories_by_creation on memories (workspace_id, created_at, id)`,
      // Metadata filters are containment (@>), which jsonb_path_ops answers with a smaller index than jsonb_ops.
      `create index memories_metadata on memories using gin (metadata jsonb_path_ops)`,
      // A content write's job carries the vector the write path computed, for the version it was computed
      // for, so recall on any node can score the memory before the indexer has written it to the index.
      `alter table index_outbox add column workspace_id text`,
      `alter table index_outbox add column version integer`,
      `alter table index_outbox add column vector bytea`,
      `create index index_outbox_pending on index_outbox (workspace_id, seq) where version is not null`,
    ],
  },
  {
    version: 12,
    name: "skills are found by their body too",
    statements: [
      // Keyword search covers the body's first 64 KiB (keywordText in src/skills/skill-text.ts).
      `drop index skills_fts`,
      `alter table skills drop column tsv`,
      `alter table skills add column tsv tsvector generated always as (to_tsvector('english', name || ' ' || description || ' ' || left(content, 65536))) stored`,
      `create index skills_fts on skills using gin (tsv)`,
      // The embedded text gained the body's "When to use" section: every skill is embedded again.
      `insert into skill_index_outbox (skill_id) select id from skills`,
    ],
  },
  {
    version: 13,
    name: "usage per day, for charting a period",
    statements: [
      // Kept beside usage_periods by the same statement (chargePeriod), so the days of a period sum to it
      // from this version on.
      `create table usage_days (
        workspace_id text not null references workspaces (id) on delete cascade,
        day date not null,
        recalls bigint not null default 0,
        cost_units bigint not null default 0,
        primary key (workspace_id, day)
      )`,
    ],
  },
  {
    version: 14,
    name: "indexed jobs kept while other nodes may not see them in the index yet",
    statements: [
      // With a LanceDB read-consistency interval (object storage), other nodes may not see a write to the
      // index for that long: its job stays, marked done, so they recall the memory from it meanwhile.
      `alter table index_outbox add column indexed_at timestamptz`,
      `create index index_outbox_indexed on index_outbox (indexed_at) where indexed_at is not null`,
    ],
  },
  {
    version: 15,
    name: "no planner statistics for the recall traces' documents",
    statements: [
      // No query filters on them, and ANALYZE read every sampled trace's candidates to build statistics:
      // 540 ms of a 20k-trace table (PGlite, where it holds every other query), 63 ms without them.
      `alter table recall_traces
         alter column candidates set statistics 0, alter column request set statistics 0,
         alter column receipt set statistics 0, alter column meta set statistics 0,
         alter column returned_ids set statistics 0, alter column query set statistics 0`,
    ],
  },
  {
    version: 16,
    name: "full-text entries merged into their index in small steps",
    statements: [
      // New words wait in a GIN index's pending list until it holds gin_pending_list_limit (4 MB by default),
      // and the statement that crosses it merges them all: 436 ms of one insert during a batch of one hundred
      // 16 KiB memories of varied words (PGlite, where it holds the event loop); a vacuum merges the list the
      // same way. At 256 kB each merge is about a sixteenth of that (20 to 50 ms per 32 KiB insert).
      `alter index memories_fts set (gin_pending_list_limit = 256)`,
      `alter index skills_fts set (gin_pending_list_limit = 256)`,
    ],
  },
  {
    version: 17,
    name: "marketplace versions: digests, safety findings, holds and yanks; pinned installs; verified authors",
    statements: [
      // Each published version, immutable once recorded: its digest (docs/reference/skill-digest.md), the
      // safety scan's findings, whether a critical finding holds it for review, and its yank.
      `create table marketplace_versions (
        skill_id text not null references skills (id) on delete cascade,
        version integer not null,
        digest text not null,
        published_at timestamptz not null,
        findings jsonb not null default '[]',
        review text not null check (review in ('published', 'held', 'cleared')),
        yanked_at timestamptz,
        yank_reason text,
        yanked_by text,
        primary key (skill_id, version)
      )`,
      `create index marketplace_versions_held on marketplace_versions (published_at, skill_id) where review = 'held'`,
      `alter table skills add column installed_digest text`,
      `alter table author_profiles add column verified boolean not null default false`,
      // A skill whose only published version is held is listed nowhere until an admin clears it.
      `alter table marketplace_listings drop constraint marketplace_listings_status_check`,
      `alter table marketplace_listings add constraint marketplace_listings_status_check check (status in ('listed', 'unlisted', 'removed', 'held'))`,
      `alter table moderation_actions drop constraint moderation_actions_action_check`,
      `alter table moderation_actions add constraint moderation_actions_action_check check (action in ('takedown', 'dismiss', 'grant', 'deny', 'clear', 'yank'))`,
      `alter table moderation_actions add column version integer`,
    ],
  },
  {
    version: 18,
    name: "skills keep the SKILL.md they were imported from, so export gives it back byte for byte",
    statements: [
      // {text, renderedSha256}: the file as imported, and the digest of what export would write from the
      // fields; export gives the text back while the fields still render to that digest.
      `alter table skills add column imported_md jsonb`,
      `alter table skill_versions add column imported_md jsonb`,
    ],
  },
];

// Serialises migrations across nodes sharing one database.
const migrationLockId = 727_110_001;

export async function migrate(db: Database): Promise<number[]> {
  return db.transaction(async (tx) => {
    await tx.query("select pg_advisory_xact_lock($1)", [migrationLockId]);
    await tx.query(`create table if not exists schema_migrations (
      version integer primary key,
      name text not null,
      applied_at timestamptz not null default now()
    )`);
    const done = new Set(
      (await tx.query<{ version: number }>("select version from schema_migrations")).map((r) => r.version),
    );
    const applied: number[] = [];
    for (const m of migrations) {
      if (done.has(m.version)) continue;
      for (const statement of m.statements) await tx.query(statement);
      await tx.query("insert into schema_migrations (version, name) values ($1, $2)", [m.version, m.name]);
      applied.push(m.version);
    }
    return applied;
  });
}
