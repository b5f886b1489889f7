/**
 * Vectors in 8 bits a dimension: each component as a multiple of the vector's largest magnitude / 127,
 * a quarter of float32's bytes. A USE-lite vector's cosine with a query moves by under 0.001 (README, Recall).
 */

/** Writes `dims` codes of `values` from `at` to `codes` from `codeAt`; returns the scale that restores them. */
export function encodeVector(values: Float32Array, at: number, dims: number, codes: Int8Array, codeAt: number): number {
  let largest = 0;
  for (let i = 0; i < dims; i++) largest = Math.max(largest, Math.abs(values[at + i]!));
  const scale = largest / 127;
  for (let i = 0; i < dims; i++) codes[codeAt + i] = scale === 0 ? 0 : Math.round(values[at + i]! / scale);
  return scale;
}

/** The vector `dims` codes from `at` stand for. */
export function decodeVector(codes: Int8Array, at: number, dims: number, scale: number): Float32Array {
  const vector = new Float32Array(dims);
  for (let i = 0; i < dims; i++) vector[i] = codes[at + i]! * scale;
  return vector;
}
