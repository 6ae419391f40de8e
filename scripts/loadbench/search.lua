-- Filtered search (POST /v1/search): text + types + min_importance, limit 10,
-- over the 1,000-thought chain the script seeds.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local topics = {"database", "deployment", "memory", "latency", "rust", "embeddings"}
local n = 0
request = function()
  n = n + 1
  local body = string.format('{"chain_key":"bench-search","text":"%s","thought_types":["Finding","Decision","Insight","Mistake"],"min_importance":0.3,"limit":10}', topics[n % #topics + 1])
  return wrk.format(nil, nil, nil, body)
end
