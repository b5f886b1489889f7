import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminKey, backends, rest, startTestServer, type TestServer } from "../support/test-server.js";

const run = promisify(execFile);
const repoRoot = new URL("../..", import.meta.url).pathname;
const keyId = /^key_[0-9a-z]{26}$/;
const newMemory = { content: "a note", type: "fact" };

const expectError = (res: { status: number; body: any }, status: number, code: string, field?: string) => {
  expect(res.status).toBe(status);
  expect(res.body.error.code).toBe(code);
  expect(typeof res.body.error.message).toBe("string");
  if (field !== undefined) expect(res.body.error.details.field).toBe(field);
};

describe.each(backends)("API keys over the admin REST API (%s)", (backend) => {
  let server: TestServer;
  let admin: ReturnType<typeof rest>;

  beforeAll(async () => {
    server = await startTestServer(backend);
    admin = rest(server.url, adminKey);
  });
  afterAll(() => server?.close());

  const createKey = async (body: Record<string, unknown>) => {
    const res = await admin("POST", "/api/v1/admin/keys", body);
    expect(res.status).toBe(200);
    return res.body as { key: string; id: string; workspace?: string; container?: string; role: string };
  };

  describe("creating keys", () => {
    it("creates a container-scoped key exactly as the contract says", async () => {
      const res = await admin("POST", "/api/v1/admin/keys", { workspace: "acme", container: "agent-1" });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^application\/json/);
      expect(res.body).toMatchObject({ workspace: "acme", container: "agent-1", role: "agent" });
      expect(res.body.id).toMatch(keyId);
      expect(typeof res.body.key).toBe("string");
      expect(res.body.key.length).toBeGreaterThanOrEqual(32);
      expect(Number.isNaN(Date.parse(res.body.createdAt))).toBe(false);
      expect(res.body).not.toHaveProperty("expiresAt");
      // The secret works on the agent API and writes into the key's container.
      const created = await rest(server.url, res.body.key)("POST", "/api/v1/agent/memories", newMemory);
      expect(created.status).toBe(200);
      expect(created.body.memories[0].containers).toEqual(["agent-1"]);
      expect(created.body.memories[0].provenance.keyId).toBe(res.body.id);
    });

    it("creates a workspace-level key when container is omitted, reusing the workspace", async () => {
      const first = await createKey({ workspace: "reuse-ws", container: "agent-1" });
      const res = await admin("POST", "/api/v1/admin/keys", { workspace: "reuse-ws" });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ workspace: "reuse-ws", role: "agent" });
      expect(res.body.id).toMatch(keyId);
      expect(res.body).not.toHaveProperty("container");
      expect(res.body.key).not.toBe(first.key);

      const listed = await admin("GET", "/api/v1/admin/keys?workspace=reuse-ws");
      expect(listed.status).toBe(200);
      expect(listed.body.keys.map((k: { id: string }) => k.id)).toEqual([res.body.id, first.id]);
      const workspaces = await server.app.db.query("select id from workspaces where name = $1", ["reuse-ws"]);
      expect(workspaces).toHaveLength(1);
      const owners = await server.app.db.query<{ workspace_id: string }>(
        "select distinct workspace_id from api_keys where id = any($1)",
        [[first.id, res.body.id]],
      );
      expect(owners).toEqual([{ workspace_id: (workspaces[0] as { id: string }).id }]);
    });
  });

  describe("authorisation of the admin API", () => {
    it("answers a missing Authorization header with 401 auth_failed", async () => {
      const res = await fetch(`${server.url}/api/v1/admin/keys`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ workspace: "acme" }),
      });
      expect(res.status).toBe(401);
      expect(((await res.json()) as any).error.code).toBe("auth_failed");
      const list = await fetch(`${server.url}/api/v1/admin/keys`);
      expect(list.status).toBe(401);
      expect(((await list.json()) as any).error.code).toBe("auth_failed");
    });

    it("answers a wrong secret with 401 auth_failed", async () => {
      expectError(await rest(server.url, adminKey + "x")("POST", "/api/v1/admin/keys", { workspace: "acme" }), 401, "auth_failed");
      expectError(await rest(server.url, "amk_not-a-real-key")("GET", "/api/v1/admin/keys"), 401, "auth_failed");
    });

    it("checks the key before the input: a bad body or query without a valid key is 401, not 400", async () => {
      const stranger = rest(server.url, "amk_not-a-real-key");
      expectError(await stranger("POST", "/api/v1/agent/memories", '{"content": '), 401, "auth_failed");
      expectError(await stranger("POST", "/api/v1/agent/recall", { query: "x", searchMode: "fuzzy" }), 401, "auth_failed");
      expectError(await stranger("GET", "/api/v1/admin/keys?includeRevoked=maybe"), 401, "auth_failed");
      const anonymous = await fetch(`${server.url}/api/v1/agent/memories`, { method: "POST", headers: { "content-type": "application/json" }, body: "{" });
      expect(anonymous.status).toBe(401);
      // With a valid key the same input is judged.
      expectError(await rest(server.url, adminKey)("GET", "/api/v1/admin/keys?includeRevoked=maybe"), 400, "invalid_request");
    });

    it("refuses agent keys with 403 forbidden", async () => {
      for (const body of [{ workspace: "acme", container: "agent-1" }, { workspace: "acme" }]) {
        const agent = rest(server.url, (await createKey(body)).key);
        expectError(await agent("POST", "/api/v1/admin/keys", { workspace: "acme" }), 403, "forbidden");
        expectError(await agent("GET", "/api/v1/admin/keys"), 403, "forbidden");
      }
    });

    it("lets an admin key created with admin: true manage keys", async () => {
      const created = await createKey({ admin: true });
      expect(created.role).toBe("admin");
      expect(created.id).toMatch(keyId);
      expect(created).not.toHaveProperty("workspace");
      expect(created).not.toHaveProperty("container");
      const secondAdmin = rest(server.url, created.key);
      const res = await secondAdmin("POST", "/api/v1/admin/keys", { workspace: "made-by-admin", container: "bot" });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ workspace: "made-by-admin", container: "bot", role: "agent" });
      expect((await secondAdmin("GET", "/api/v1/admin/keys?workspace=made-by-admin")).body.keys).toHaveLength(1);
      // An admin key is not an agent key.
      expectError(await secondAdmin("POST", "/api/v1/agent/memories", { ...newMemory, containers: ["bot"] }), 403, "forbidden");
    });

    it.each([
      [{ admin: true, workspace: "x" }, "admin", "exclusive"],
      [{ admin: true, container: "agent-1" }, "admin", "exclusive"],
      [{}, "workspace", "required"],
      [{ container: "agent-1" }, "workspace", "required"],
      [{ workspace: "has space" }, "workspace", "format"],
      [{ workspace: "x".repeat(65) }, "workspace", "format"],
      [{ workspace: "acme", container: "bad name!" }, "container", "format"],
      [{ workspace: "acme", expiresAt: "2000-01-01T00:00:00Z" }, "expiresAt", "future"],
      [{ workspace: "acme", expiresAt: "tomorrow" }, "expiresAt", "iso8601"],
      [{ workspace: "acme", colour: "red" }, "colour", "unknown_field"],
      [{ workspace: "acme", name: "ci\nforged line" }, "name", "one_line"],
    ])("rejects %j with 400 naming %s", async (body, field, rule) => {
      const before = (await server.app.db.query("select id from api_keys")).length;
      const res = await admin("POST", "/api/v1/admin/keys", body);
      expectError(res, 400, "invalid_request", field);
      expect(res.body.error.message).toContain(field);
      expect(res.body.error.details.rule).toBe(rule);
      expect((await server.app.db.query("select id from api_keys")).length).toBe(before);
    });
  });

  describe("listing keys", () => {
    it("lists newest first with public fields only, filtered by workspace", async () => {
      const a = await createKey({ workspace: "list-ws", container: "agent-1" });
      const b = await createKey({ workspace: "list-ws" });
      const c = await createKey({ workspace: "list-ws", container: "agent-2", name: "third" });
      const other = await createKey({ workspace: "list-other", container: "agent-1" });
      const secrets = [a.key, b.key, c.key, other.key];

      const filtered = await admin("GET", "/api/v1/admin/keys?workspace=list-ws");
      expect(filtered.status).toBe(200);
      expect(filtered.body.keys.map((k: { id: string }) => k.id)).toEqual([c.id, b.id, a.id]);
      const [kc, kb, ka] = filtered.body.keys;
      expect(ka).toMatchObject({ id: a.id, workspace: "list-ws", container: "agent-1", role: "agent" });
      expect(kb).toMatchObject({ id: b.id, workspace: "list-ws", role: "agent" });
      expect(kb).not.toHaveProperty("container");
      expect(kc).toMatchObject({ id: c.id, workspace: "list-ws", container: "agent-2", role: "agent", name: "third" });
      for (const [listed, created] of [
        [ka, a],
        [kb, b],
        [kc, c],
      ] as const) {
        expect(Number.isNaN(Date.parse(listed.createdAt))).toBe(false);
        expect(typeof listed.prefix).toBe("string");
        expect(listed.prefix.length).toBeGreaterThan(0);
        expect(listed.prefix.length).toBeLessThan(created.key.length / 2);
        expect(created.key.startsWith(listed.prefix)).toBe(true);
        expect(listed).not.toHaveProperty("key");
        expect(listed).not.toHaveProperty("secret");
        expect(listed).not.toHaveProperty("secretHash");
        expect(listed).not.toHaveProperty("revokedAt");
      }

      const all = await admin("GET", "/api/v1/admin/keys");
      expect(all.status).toBe(200);
      const ids = all.body.keys.map((k: { id: string }) => k.id);
      expect(ids).toEqual(expect.arrayContaining([a.id, b.id, c.id, other.id]));
      expect(ids.indexOf(other.id)).toBeLessThan(ids.indexOf(c.id));
      const times = all.body.keys.map((k: { createdAt: string }) => Date.parse(k.createdAt));
      expect(times).toEqual([...times].sort((x: number, y: number) => y - x));
      const text = JSON.stringify(all.body) + JSON.stringify(filtered.body);
      for (const secret of [...secrets, adminKey]) expect(text).not.toContain(secret);

      expect((await admin("GET", "/api/v1/admin/keys?workspace=no-such-ws")).body.keys ?? []).toEqual([]);
    });

    it("hides revoked keys unless includeRevoked=true", async () => {
      const live = await createKey({ workspace: "revoked-ws", container: "a" });
      const gone = await createKey({ workspace: "revoked-ws", container: "b" });
      expect((await admin("DELETE", `/api/v1/admin/keys/${gone.id}`)).status).toBe(200);

      const visible = await admin("GET", "/api/v1/admin/keys?workspace=revoked-ws");
      expect(visible.body.keys.map((k: { id: string }) => k.id)).toEqual([live.id]);
      const everything = await admin("GET", "/api/v1/admin/keys?workspace=revoked-ws&includeRevoked=true");
      expect(everything.status).toBe(200);
      expect(everything.body.keys.map((k: { id: string }) => k.id)).toEqual([gone.id, live.id]);
      expect(Number.isNaN(Date.parse(everything.body.keys[0].revokedAt))).toBe(false);
      expect(everything.body.keys[1]).not.toHaveProperty("revokedAt");
      const unfiltered = await admin("GET", "/api/v1/admin/keys");
      expect(unfiltered.body.keys.map((k: { id: string }) => k.id)).not.toContain(gone.id);
    });
  });

  describe("rotation", () => {
    it("replaces the secret; the old one fails at once even though it was cached", async () => {
      const created = await createKey({ workspace: "rotate-ws", container: "agent-1" });
      const oldAgent = rest(server.url, created.key);
      // Used just before rotation, so the server has verified (and cached) it.
      expect((await oldAgent("POST", "/api/v1/agent/memories", newMemory)).status).toBe(200);
      expect((await oldAgent("POST", "/api/v1/agent/memories", newMemory)).status).toBe(200);

      const rotated = await admin("POST", `/api/v1/admin/keys/${created.id}/rotate`, {});
      expect(rotated.status).toBe(200);
      expect(typeof rotated.body.key).toBe("string");
      expect(rotated.body.key).not.toBe(created.key);
      expect(rotated.body.apiKey).toMatchObject({ id: created.id, workspace: "rotate-ws", container: "agent-1", role: "agent" });
      expect(Number.isNaN(Date.parse(rotated.body.apiKey.lastRotatedAt))).toBe(false);
      expect(rotated.body.apiKey).not.toHaveProperty("revokedAt");
      expect(rotated.body.key.startsWith(rotated.body.apiKey.prefix)).toBe(true);

      expectError(await oldAgent("POST", "/api/v1/agent/memories", newMemory), 401, "auth_failed");
      expectError(await oldAgent("GET", "/api/v1/agent/memories/mem_01jd000000000000000000000"), 401, "auth_failed");
      const newAgent = rest(server.url, rotated.body.key);
      const written = await newAgent("POST", "/api/v1/agent/memories", newMemory);
      expect(written.status).toBe(200);
      expect(written.body.memories[0]).toMatchObject({ containers: ["agent-1"], provenance: { keyId: created.id } });

      const listed = (await admin("GET", "/api/v1/admin/keys?workspace=rotate-ws")).body.keys;
      expect(listed).toHaveLength(1);
      expect(listed[0]).toMatchObject({ id: created.id, lastRotatedAt: rotated.body.apiKey.lastRotatedAt });
    });

    it("answers an unknown or revoked id with 404 not_found", async () => {
      expectError(await admin("POST", "/api/v1/admin/keys/key_00000000000000000000000000/rotate", {}), 404, "not_found");
      const revoked = await createKey({ workspace: "rotate-ws", container: "agent-9" });
      expect((await admin("DELETE", `/api/v1/admin/keys/${revoked.id}`)).status).toBe(200);
      expectError(await admin("POST", `/api/v1/admin/keys/${revoked.id}/rotate`, {}), 404, "not_found");
      expectError(await rest(server.url, revoked.key)("POST", "/api/v1/agent/memories", newMemory), 401, "auth_failed");
    });
  });

  describe("revocation", () => {
    it("revokes a key at once and returns its record", async () => {
      const created = await createKey({ workspace: "revoke-ws", container: "agent-1" });
      const agent = rest(server.url, created.key);
      expect((await agent("POST", "/api/v1/agent/memories", newMemory)).status).toBe(200);

      const revoked = await admin("DELETE", `/api/v1/admin/keys/${created.id}`);
      expect(revoked.status).toBe(200);
      expect(revoked.body).toMatchObject({ id: created.id, workspace: "revoke-ws", container: "agent-1", role: "agent" });
      expect(Number.isNaN(Date.parse(revoked.body.revokedAt))).toBe(false);
      expect(revoked.body).not.toHaveProperty("key");

      expectError(await agent("POST", "/api/v1/agent/memories", newMemory), 401, "auth_failed");
      expectError(await agent("GET", "/api/v1/agent/memories/mem_01jd000000000000000000000"), 401, "auth_failed");
    });

    it("stops a revoked admin key from calling the admin API", async () => {
      const created = await createKey({ admin: true });
      const second = rest(server.url, created.key);
      expect((await second("GET", "/api/v1/admin/keys")).status).toBe(200);
      expect((await admin("DELETE", `/api/v1/admin/keys/${created.id}`)).status).toBe(200);
      expectError(await second("GET", "/api/v1/admin/keys"), 401, "auth_failed");
    });

    it("answers an unknown id with 404 not_found", async () => {
      expectError(await admin("DELETE", "/api/v1/admin/keys/key_00000000000000000000000000"), 404, "not_found");
    });
  });

  it("expires a key at its expiresAt", async () => {
    // Far enough ahead that creating the key and one cheap call fit before it, even on a busy machine.
    const expiresAt = new Date(Date.now() + 3000);
    const created = await admin("POST", "/api/v1/admin/keys", {
      workspace: "expiry-ws",
      container: "agent-1",
      expiresAt: expiresAt.toISOString(),
    });
    expect(created.status).toBe(200);
    expect(Date.parse(created.body.expiresAt)).toBe(expiresAt.getTime());
    const agent = rest(server.url, created.body.key);
    const before = await agent("GET", "/api/v1/agent/stats");
    const answeredBy = Date.now();
    if (answeredBy < expiresAt.getTime()) expect(before.status).toBe(200);

    // Polled until refused (the test's timeout bounds it): a deadline of our own would race the machine.
    let last = await agent("GET", "/api/v1/agent/stats");
    while (last.status === 200) {
      await new Promise((r) => setTimeout(r, 100));
      last = await agent("GET", "/api/v1/agent/stats");
    }
    expectError(last, 401, "auth_failed");
    // Not before its time: the key was refused only once expiresAt had passed.
    expect(Date.now()).toBeGreaterThanOrEqual(expiresAt.getTime());
    expectError(await agent("GET", "/api/v1/agent/memories/mem_01jd000000000000000000000"), 401, "auth_failed");
  });

  it("stores keys hashed, never the secret", async () => {
    const created = await createKey({ workspace: "hash-ws", container: "agent-1" });
    const rows = await server.app.db.query<Record<string, unknown>>("select * from api_keys");
    expect(rows.length).toBeGreaterThan(0);
    const secretBytes = Buffer.from(created.key, "utf8");
    for (const row of rows) {
      for (const [column, value] of Object.entries(row)) {
        if (value === null || value === undefined) continue;
        if (value instanceof Uint8Array) {
          const bytes = Buffer.from(value);
          expect({ column, containsSecret: bytes.includes(secretBytes) }).toEqual({ column, containsSecret: false });
          expect({ column, containsSecret: bytes.toString("utf8").includes(created.key) }).toEqual({ column, containsSecret: false });
        } else {
          const text = value instanceof Date ? value.toISOString() : String(value);
          expect({ column, containsSecret: text.includes(created.key) }).toEqual({ column, containsSecret: false });
        }
      }
    }
    const [mine] = rows.filter((r) => r.id === created.id);
    expect(mine).toBeDefined();
    expect(mine!.secret_hash).toBeInstanceOf(Uint8Array);
    expect((mine!.secret_hash as Uint8Array).byteLength).toBe(32);
    // The whole table, however it is rendered, never holds the secret.
    const dump = await server.app.db.query<{ t: string }>("select string_agg(t::text, ',') as t from api_keys t");
    expect(dump[0]!.t).not.toContain(created.key);
  });

  it("parses the Bearer scheme strictly but case-insensitively", async () => {
    const created = await createKey({ workspace: "bearer-ws", container: "agent-1" });
    const call = (authorization: string) =>
      fetch(`${server.url}/api/v1/agent/memories`, {
        method: "POST",
        headers: { authorization, "content-type": "application/json" },
        body: JSON.stringify(newMemory),
      });
    expect((await call(`bearer ${created.key}`)).status).toBe(200);
    expect((await call(`BEARER ${created.key}`)).status).toBe(200);
    for (const header of [
      `Basic ${Buffer.from(`user:${created.key}`).toString("base64")}`,
      `Basic ${created.key}`,
      "Bearer ",
      "Bearer",
      created.key,
      `Bearer ${created.key} extra`,
    ]) {
      const res = await call(header);
      expect({ header, status: res.status }).toEqual({ header, status: 401 });
      expect(((await res.json()) as any).error.code).toBe("auth_failed");
    }
  });
});

describe("agentmem CLI (pglite)", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer("pglite");
  });
  afterAll(() => server?.close());

  const cli = (args: string[], env: Record<string, string | undefined>) => {
    const childEnv: NodeJS.ProcessEnv = { ...process.env };
    delete childEnv.AGENTMEM_ADMIN_KEY;
    delete childEnv.AGENTMEM_URL;
    return run(process.execPath, ["src/cli/agentmem.mjs", ...args], {
      cwd: repoRoot,
      env: { ...childEnv, ...env },
      timeout: 20_000,
    });
  };

  it("creates, lists and revokes keys through the admin API", async () => {
    const env = { AGENTMEM_URL: server.url, AGENTMEM_ADMIN_KEY: adminKey };
    const created = await cli(["keys", "create", "--workspace", "acme", "--container", "agent-1"], env);
    const key = JSON.parse(created.stdout);
    expect(key).toMatchObject({ workspace: "acme", container: "agent-1", role: "agent" });
    expect(key.id).toMatch(keyId);
    expect(typeof key.key).toBe("string");
    expect((await rest(server.url, key.key)("POST", "/api/v1/agent/memories", newMemory)).status).toBe(200);

    const wsKey = JSON.parse((await cli(["keys", "create", "--workspace", "acme"], env)).stdout);
    expect(wsKey).toMatchObject({ workspace: "acme", role: "agent" });
    expect(wsKey).not.toHaveProperty("container");

    const listed = JSON.parse((await cli(["keys", "list", "--workspace", "acme"], env)).stdout);
    expect(listed.keys.map((k: { id: string }) => k.id)).toEqual([wsKey.id, key.id]);
    expect(JSON.stringify(listed)).not.toContain(key.key);

    const revoked = JSON.parse((await cli(["keys", "revoke", key.id], env)).stdout);
    expect(revoked).toMatchObject({ id: key.id, workspace: "acme", container: "agent-1" });
    expect(Number.isNaN(Date.parse(revoked.revokedAt))).toBe(false);
    const after = await rest(server.url, key.key)("POST", "/api/v1/agent/memories", newMemory);
    expect(after.status).toBe(401);
    expect(after.body.error.code).toBe("auth_failed");
    const remaining = JSON.parse((await cli(["keys", "list", "--workspace", "acme"], env)).stdout);
    expect(remaining.keys.map((k: { id: string }) => k.id)).toEqual([wsKey.id]);
  });

  it("fails with a message on stderr when AGENTMEM_ADMIN_KEY is missing", async () => {
    const failure = await cli(["keys", "list"], { AGENTMEM_URL: server.url }).then(
      () => undefined,
      (err: { code?: unknown; stderr?: string }) => err,
    );
    expect(failure).toBeDefined();
    expect(typeof failure!.code).toBe("number");
    expect(failure!.code).not.toBe(0);
    expect(failure!.stderr).toContain("AGENTMEM_ADMIN_KEY");
  });

  it("exits non-zero and prints the service's error for a rejected request", async () => {
    const failure = await cli(["keys", "revoke", "key_00000000000000000000000000"], {
      AGENTMEM_URL: server.url,
      AGENTMEM_ADMIN_KEY: adminKey,
    }).then(
      () => undefined,
      (err: { code?: unknown; stdout?: string }) => err,
    );
    expect(failure).toBeDefined();
    expect(failure!.code).not.toBe(0);
    expect(JSON.parse(failure!.stdout!).error.code).toBe("not_found");
  });
});
