import { api } from "../api.js";
import { DayChart } from "../components/day-chart.js";
import { Loading, Problem } from "../components/problem.js";
import { num, when } from "../format.js";
import { useLoad } from "../use-call.js";

function Meter({ label, used, limit }: { label: string; used: number; limit: number | undefined }) {
  return (
    <div class="meter-row" data-meter={label}>
      <span class="meter-label">{label}</span>
      {limit !== undefined ? (
        <>
          <meter min={0} max={limit} value={used} high={limit * 0.8} aria-label={`${label}: ${used} of ${limit}`} />
          <span>
            {num(used)} of {num(limit)} ({num((100 * used) / Math.max(1, limit), 1)}%)
          </span>
        </>
      ) : (
        <span>{num(used)} (unlimited)</span>
      )}
    </div>
  );
}

const daysBetween = (fromIso: string, toIso: string) => Math.round((Date.parse(toIso) - Date.parse(fromIso)) / 86_400_000);

export function UsagePage() {
  const loaded = useLoad(async () => {
    const [stats, history] = await Promise.all([api.stats.getStats({}), api.stats.getUsageHistory({})]);
    return { stats, history };
  }, []);
  const s = loaded.data?.stats;
  const h = loaded.data?.history;
  return (
    <section aria-labelledby="usage-title">
      <h1 id="usage-title">Usage</h1>
      <Problem problem={loaded.problem} />
      <Loading when={loaded.loading && !s} />
      {s && h && (
        <>
          <p>
            Plan <strong data-testid="plan">{s.plan}</strong>, period {when(s.periodStart)} to {when(s.resetsAt)} (resets then).
          </p>
          <div class="meters">
            <Meter label="Memories stored" used={s.memoriesStored} limit={s.limits?.memoriesStored} />
            <Meter label="Skills stored" used={s.skillsStored} limit={s.limits?.skillsStored} />
            <Meter label="Recalls this period" used={s.recallsUsed} limit={s.limits?.recallsPerMonth} />
            <Meter label="Cost units this period" used={s.costUsed} limit={s.limits?.costUnitsPerMonth} />
          </div>
          <div class="charts">
            <DayChart
              label="Recalls"
              dates={h.days.map((d) => d.date)}
              periodDays={daysBetween(h.periodStart, h.resetsAt)}
              values={h.days.map((d) => d.recalls)}
              limit={s.limits?.recallsPerMonth}
            />
            <DayChart
              label="Cost units, running total"
              cumulative
              dates={h.days.map((d) => d.date)}
              periodDays={daysBetween(h.periodStart, h.resetsAt)}
              values={h.days.map((d) => d.costUnits)}
              limit={s.limits?.costUnitsPerMonth}
            />
          </div>
          <h2>This key's rate limits</h2>
          {s.rateLimits && (
            <table class="kv">
              <tbody>
                <tr>
                  <th scope="row">Sustained</th>
                  <td>{num(s.rateLimits.sustainedPerSecond)} requests/s</td>
                </tr>
                <tr>
                  <th scope="row">Burst</th>
                  <td>
                    {num(s.rateLimits.burstPerSecond)} requests/s for {num(s.rateLimits.burstSeconds)} s
                  </td>
                </tr>
                <tr>
                  <th scope="row">Concurrency</th>
                  <td>{s.rateLimits.concurrency} in flight</td>
                </tr>
                <tr>
                  <th scope="row">Set by</th>
                  <td>{s.rateLimits.source}</td>
                </tr>
              </tbody>
            </table>
          )}
        </>
      )}
    </section>
  );
}
