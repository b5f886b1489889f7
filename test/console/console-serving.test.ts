import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkBundleSize, javascriptBudgetBytes } from "../../src/console/bundle-size.js";
import { consolePlugin, consolePrefix } from "../../src/console/console-plugin.js";

// How /console is served, without a browser or a database: the console plugin as the server registers
// it, on Fastify alone (the real server's /console is checked in console-rpcs.test.ts, unbuilt, and in
// console.test.ts, built). The 503 before a build, the security headers on every console response,
// caching, and the bundle size check `npm run build` ends with.

const root = path.resolve(import.meta.dirname, "../..");

describe("console serving", () => {
  let app: FastifyInstance;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "agentmem-console-"));
    app = Fastify();
    await app.register(consolePlugin, { prefix: consolePrefix, dir });
  });
  afterAll(async () => {
    await app?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const get = (url: string) => app.inject(url);

  function expectSecurityHeaders(res: LightMyRequestResponse) {
    const csp = String(res.headers["content-security-policy"]);
    for (const directive of ["default-src 'self'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "frame-ancestors 'none'", "base-uri 'none'", "object-src 'none'"]) {
      expect(csp.split("; ")).toContain(directive);
    }
    expect(csp).not.toContain("unsafe");
    expect(res.headers["x-content-type-options"]).toBe("nosniff");
    expect(res.headers["referrer-policy"]).toBe("no-referrer");
    expect(res.headers["x-frame-options"]).toBe("DENY");
  }

  it("answers 503 saying how to build until a build appears, then serves it, every response with the security headers", async () => {
    // Registered without a build.
    for (const url of ["/console", "/console/", "/console/assets/app.js"]) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(503);
      expect(res.headers["content-type"]).toBe("text/html; charset=utf-8");
      expect(res.body).toContain("npm run build");
      expectSecurityHeaders(res);
    }

    // A build appears (as `npm run build` writes it): served without a restart.
    mkdirSync(path.join(dir, "assets"));
    writeFileSync(path.join(dir, "index.html"), '<!doctype html><script type="module" src="/console/assets/app-0a1b2c3d.js"></script>');
    writeFileSync(path.join(dir, "assets/app-0a1b2c3d.js"), "export {};\n");
    writeFileSync(path.join(dir, ".env"), "SECRET=1\n");

    const redirect = await get("/console");
    expect(redirect.statusCode).toBe(301);
    expect(redirect.headers["location"]).toBe("/console/");
    expectSecurityHeaders(redirect);

    const page = await get("/console/");
    expect(page.statusCode).toBe(200);
    expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(page.headers["cache-control"]).toBe("no-cache");
    expect(page.body).toContain("app-0a1b2c3d.js");
    expectSecurityHeaders(page);

    const script = await get("/console/assets/app-0a1b2c3d.js");
    expect(script.statusCode).toBe(200);
    expect(script.headers["content-type"]).toBe("application/javascript; charset=utf-8");
    expect(script.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
    expectSecurityHeaders(script);

    for (const url of ["/console/nope", "/console/.env", "/console/assets/"]) {
      const missing = await get(url);
      expect(missing.statusCode, url).toBe(404);
      expect(missing.headers["content-type"]).toBe("text/html; charset=utf-8");
      expectSecurityHeaders(missing);
    }
    // Nothing outside the build directory. inject resolves "%2e%2e/" (outside /console: the server's 404);
    // console-bad-paths.test.ts sends raw paths to the real server.
    expect((await get("/console/%2e%2e/%2e%2e/package.json")).statusCode).toBe(404);
    for (const url of ["/console/..%2f..%2fpackage.json", "/console/a%00b"]) {
      const refused = await get(url);
      expect(refused.statusCode, url).toBe(400);
      expect(refused.json()).toMatchObject({ error: { code: "invalid_request", details: { field: "path", rule: "format" } } });
      expectSecurityHeaders(refused);
    }
  });

  it("checks the JavaScript size of a build against the 250 KB gzipped budget, printing it", () => {
    const build = mkdtempSync(path.join(os.tmpdir(), "agentmem-bundle-"));
    try {
      mkdirSync(path.join(build, "assets"));
      writeFileSync(path.join(build, "assets/small.js"), "console.log('small');\n".repeat(1000));
      writeFileSync(path.join(build, "assets/style.css"), randomBytes(400_000).toString("base64"));
      const small = checkBundleSize(build);
      expect(small.ok).toBe(true);
      expect(small.message).toMatch(/^console JavaScript: 0\.\d KB gzipped in 1 file \(budget 250 KB\)$/);

      // Random text barely compresses: 400 KB of base64 is about 300 KB gzipped.
      writeFileSync(path.join(build, "assets/big.js"), randomBytes(300_000).toString("base64"));
      const big = checkBundleSize(build);
      expect(big.ok).toBe(false);
      expect(big.message).toMatch(/^console JavaScript: \d{3}\.\d KB gzipped in 2 files, over the budget of 250 KB$/);
      expect(javascriptBudgetBytes).toBe(250_000);

      // The script `npm run build` runs fails the build with that message.
      const cli = spawnSync(process.execPath, ["--import", "tsx", "src/console/check-bundle-size.ts", build], { cwd: root, encoding: "utf8" });
      expect(cli.status).toBe(1);
      expect(cli.stderr).toContain(big.message);
      expect(checkBundleSize(path.join(build, "nothing")).ok).toBe(false);
    } finally {
      rmSync(build, { recursive: true, force: true });
    }
  });
});
