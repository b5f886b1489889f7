export * from "./rest-client.js";
export * from "./agent-tools.js";
