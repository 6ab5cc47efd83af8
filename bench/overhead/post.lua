-- wrk script: POST the body in BENCH_BODY with the headers in BENCH_HEADERS (one "name: value" per line).
wrk.method = "POST"
wrk.body = os.getenv("BENCH_BODY")
for name, value in string.gmatch(os.getenv("BENCH_HEADERS") or "", "([^:\n]+): ([^\n]*)") do
  wrk.headers[name] = value
end
