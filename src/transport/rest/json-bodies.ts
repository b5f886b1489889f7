import type { FastifyInstance, FastifyRequest } from "fastify";
import { invalidRequest } from "../../errors/api-error.js";

type ParserDone = (err: Error | null, body?: unknown) => void;

const isJson = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

/**
 * Request bodies of the REST API and MCP are JSON. Fastify's parser refuses a `__proto__` key, or a
 * `constructor` holding `prototype`, anywhere in a body (they could rewrite objects' prototypes) as "not
 * valid JSON"; this says which rule it broke. A body of any other type (text from a client that set no
 * JSON content type, a form) gets "content-type: must be application/json", once read within the body
 * limit like JSON: answered before it was read, a large one was cut off and its client saw a reset.
 */
export function jsonBodies(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser("error", "error") as (req: FastifyRequest, body: string, done: ParserDone) => void;
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("application/json", { parseAs: "string" }, (req, body, done) => {
    const text = body as string;
    parseJson(req, text, (err, value) =>
      err && isJson(text)
        ? done(invalidRequest("body", "forbidden_key", "must not hold a __proto__ key, or a constructor key holding prototype"))
        : done(err, value),
    );
  });
  app.addContentTypeParser("*", { parseAs: "buffer" }, (_req, _body, done) => done(invalidRequest("content-type", "content_type", "must be application/json")));
}
