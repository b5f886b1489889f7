import { describe, expect, it } from "vitest";
import { storeFailureOf } from "../../src/search/vector/object-store-check.js";
import { onWriterRole } from "../../src/search/writer-role.js";

describe("the writer role", () => {
  it("catches up once each time the node gains the role, and not while it lacks it", () => {
    let holds = false;
    let catchUps = 0;
    const check = onWriterRole(() => holds, () => catchUps++);
    check();
    expect(catchUps).toBe(0);
    holds = true;
    check();
    check();
    expect(catchUps).toBe(1);
    holds = false;
    check();
    holds = true;
    check();
    expect(catchUps).toBe(2);
  });
});

describe("an object store's failure in a few words", () => {
  it("keeps the store's error code and message, or names the transport's failure", () => {
    const body = '<?xml version="1.0"?>\n<Error><Code>NoSuchBucket</Code><Message>The specified bucket does not exist</Message></Error>';
    expect(storeFailureOf(`Failed to connect to namespace: IO { inner: Status { status: 404, body: Some("${body}") } }`)).toBe(
      "NoSuchBucket: The specified bucket does not exist",
    );
    expect(storeFailureOf("inner: Http(HttpError { kind: Unknown, source: reqwest::Error { kind: Builder, source: BadScheme } })")).toMatch(/LANCEDB_STORAGE_ALLOW_HTTP=true/);
    expect(storeFailureOf("inner: Status { status: 403, body: None }")).toBe("HTTP status 403");
    expect(storeFailureOf("HTTP error: error sending request for url")).toBe("no connection to the endpoint");
  });
});
