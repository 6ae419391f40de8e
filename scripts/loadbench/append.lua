-- Durable appends to one chain (POST /v1/thoughts); each response is sent
-- only after the append was fsynced. The chain is bench-append, or
-- $LOADBENCH_CHAIN.
local chain = os.getenv("LOADBENCH_CHAIN") or "bench-append"
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local n = 0
request = function()
  n = n + 1
  local body = string.format('{"chain_key":"%s","agent_id":"agent-%d","thought_type":"Finding","importance":0.%d,"tags":["t%d","bench"],"concepts":["memory"],"content":"Thought %d about database latency observed during load testing of the daemon."}', chain, n % 8, n % 10, n % 20, n)
  return wrk.format(nil, nil, nil, body)
end
