-- Shared by every wrk script here: print one JSON line with the figures make bench reads.
function done(summary, latency, requests)
  local seconds = summary.duration / 1e6
  local errors = summary.errors.connect + summary.errors.read + summary.errors.write
                 + summary.errors.status + summary.errors.timeout
  io.write(string.format(
    'WRK_JSON {"requests": %d, "seconds": %.3f, "per_second": %.1f, "p50_ms": %.3f, "p99_ms": %.3f, "errors": %d, "non_2xx": %d}\n',
    summary.requests, seconds, summary.requests / seconds, latency:percentile(50) / 1000,
    latency:percentile(99) / 1000, errors, summary.errors.status))
end
