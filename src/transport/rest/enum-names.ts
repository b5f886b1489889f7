import type { DescEnum } from "@bufbuild/protobuf";

// REST JSON spells enum values the way the spec does ("fact", not "MEMORY_TYPE_FACT"):
// the value name without the enum's prefix, in lower case. Connect JSON keeps proto names.

function enumPrefix(desc: DescEnum): string {
  return desc.name.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toUpperCase() + "_";
}

export function restEnumName(desc: DescEnum, protoName: string): string {
  const prefix = enumPrefix(desc);
  const short = protoName.startsWith(prefix) ? protoName.slice(prefix.length) : protoName;
  return short.toLowerCase();
}

/** The REST names of an enum's values, without the zero ("unspecified") value. */
export function restEnumValues(desc: DescEnum): string[] {
  return desc.values.filter((v) => v.number !== 0).map((v) => restEnumName(desc, v.name));
}

/** The proto names of an enum's values (what gRPC and Connect accept), without the zero value. */
export function protoEnumValues(desc: DescEnum): string[] {
  return desc.values.filter((v) => v.number !== 0).map((v) => v.name);
}
