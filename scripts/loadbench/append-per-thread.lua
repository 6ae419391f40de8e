-- Durable appends (POST /v1/thoughts), each wrk thread to its own chain:
-- with -t16 -c16, one connection per chain. The chain key is the prefix
-- given as the first script argument plus the thread's number (or the
-- prefix alone, for every thread, when the second argument is "one"); run
-- one wrk per daemon with the same prefix and every chain is written
-- through every daemon at once (the PostgreSQL bench's "16 chains through
-- 3 instances").
local threads = 0
function setup(thread)
  thread:set("id", threads)
  threads = threads + 1
end
function init(args)
  prefix = args[1] or "wrk"
  chain = args[2] == "one" and prefix or (prefix .. "-" .. id)
  n = 0
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
end
function request()
  n = n + 1
  local body = string.format('{"chain_key":"%s","agent_id":"agent-%d","thought_type":"Finding","content":"Thought %d about database latency observed during load testing of the daemon."}', chain, id, n)
  return wrk.format(nil, nil, nil, body)
end
