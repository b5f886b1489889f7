/** What a phase is. */
export interface PhaseInfo {
  phase: string;
  transport: "rest" | "grpc" | "mcp";
  /** Memories stored when the phase started. */
  dataSize: number;
  concurrency: number;
}

/** What every phase reports, whatever drove it. */
export interface PhaseResult extends PhaseInfo {
  durationS: number;
  /** Successful calls. */
  ok: number;
  errors: number;
  /** Error counts by HTTP status or gRPC code, to tell a failing phase's cause at a glance. */
  errorKinds: Record<string, number>;
  reqPerS: number;
  /** Memories written per second; absent for reads. */
  memoriesPerS?: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
}

/** Latencies (ms) of successful calls, and failures by kind. */
export class Recorder {
  private readonly latencies: number[] = [];
  readonly errorKinds: Record<string, number> = {};

  success(ms: number): void {
    this.latencies.push(ms);
  }

  failure(kind: string): void {
    this.errorKinds[kind] = (this.errorKinds[kind] ?? 0) + 1;
  }

  get ok(): number {
    return this.latencies.length;
  }

  get errors(): number {
    return Object.values(this.errorKinds).reduce((a, b) => a + b, 0);
  }

  /** Summarises a phase that ran for `elapsedS`; a write phase also gives the memories it stored. */
  result(info: PhaseInfo, elapsedS: number, memoriesWritten?: number): PhaseResult {
    const sorted = Float64Array.from(this.latencies).sort();
    return {
      ...info,
      durationS: elapsedS,
      ok: this.ok,
      errors: this.errors,
      errorKinds: this.errorKinds,
      reqPerS: this.ok / elapsedS,
      ...(memoriesWritten === undefined ? {} : { memoriesPerS: memoriesWritten / elapsedS }),
      p50Ms: percentile(sorted, 50),
      p95Ms: percentile(sorted, 95),
      p99Ms: percentile(sorted, 99),
    };
  }
}

/** Nearest-rank percentile of sorted values; NaN when there are none. */
function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}
