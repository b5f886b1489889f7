import type { DescEnum, DescField, DescMessage } from "@bufbuild/protobuf";
import type { ConnectError } from "@connectrpc/connect";
import { apiError, describeError } from "../errors/api-error.js";
import { protoEnumValues, restEnumValues } from "./rest/enum-names.js";
import { findField } from "./rest/rest-json.js";

// Validation messages name the allowed values of an enum field in REST spelling ("must be one of fact,
// lesson, …"). gRPC and Connect callers send proto names (MEMORY_TYPE_FACT), so their errors name those.

/** The enum of the field an error names by its path (memories[1].type, types[0]), if that field is an enum. */
export function enumAtPath(desc: DescMessage, path: string): DescEnum | undefined {
  let message: DescMessage | undefined = desc;
  let field: DescField | undefined;
  for (const segment of path.split(".")) {
    if (!message) return undefined;
    field = findField(message, segment.replace(/(\[\d+\])+$/, ""));
    if (!field) return undefined;
    message = field.message;
  }
  return field?.enum;
}

/** An invalid_request naming an enum field's values in REST spelling, reworded with their proto names. */
export function withProtoEnumNames(err: ConnectError, input: DescMessage): ConnectError {
  const { code, message, details } = describeError(err);
  const desc = code === "invalid_request" && details.field ? enumAtPath(input, details.field) : undefined;
  const restList = desc && restEnumValues(desc).join(", ");
  if (!desc || !restList || !message.includes(restList)) return err;
  const reworded = apiError(code, message.replace(restList, protoEnumValues(desc).join(", ")), details);
  err.metadata.forEach((value, name) => reworded.metadata.set(name, value));
  return reworded;
}
