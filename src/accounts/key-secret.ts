import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

// Secrets carry 256 random bits, so a fast hash is safe to store: there is nothing to brute-force.
const secretPrefix = "amk_";

export function newKeySecret(): string {
  return secretPrefix + randomBytes(32).toString("base64url");
}

export function hashSecret(secret: string): Buffer {
  return createHash("sha256").update(secret).digest();
}

/** The first characters shown in listings so people can tell keys apart. */
export const displayPrefix = (secret: string): string => secret.slice(0, secretPrefix.length + 6);

export function secretsEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
