-- Health of a fedlearner FLApp, from the operator's status.appState.
-- Mapped the way Argo CD treats batch kinds (Job, Argo Workflow): a job on
-- its way is Progressing, a finished one Healthy, a failed one Degraded.
-- Argo CD runs this without Lua's string library: build text with `..` only.

-- "Master 1 active; Worker 2 active, 1 succeeded" from
-- status.flReplicaStatus.<Type>.{active,succeeded,failed} (sets of pod names:
-- JSON objects keyed by pod name; lists are counted the same way).
local function size(set)
  local n = 0
  if type(set) == "table" then
    for _ in pairs(set) do
      n = n + 1
    end
  end
  return n
end

local function replicaCounts(status)
  if type(status.flReplicaStatus) ~= "table" then
    return ""
  end
  local types = {}
  for rtype in pairs(status.flReplicaStatus) do
    table.insert(types, rtype)
  end
  table.sort(types)
  local parts = {}
  for _, rtype in ipairs(types) do
    local rs = status.flReplicaStatus[rtype]
    if type(rs) == "table" then
      local counts = {}
      for _, field in ipairs({"active", "succeeded", "failed"}) do
        local n = size(rs[field])
        if n > 0 then
          table.insert(counts, n .. " " .. field)
        end
      end
      if #counts > 0 then
        table.insert(parts, rtype .. " " .. table.concat(counts, ", "))
      end
    end
  end
  if #parts == 0 then
    return ""
  end
  return " Pods: " .. table.concat(parts, "; ") .. "."
end

local states = {
  FLStateNew = {"Progressing", "the operator is creating the job's pods, Services and ConfigMaps."},
  FLStateBootstrapped = {"Progressing", "pods and Services are up; pairing with the peer (a leader waits for its follower to register)."},
  FLStateSyncSent = {"Progressing", "pairing sent to the peer; waiting for the leader to confirm the pod mapping."},
  FLStateRunning = {"Progressing", "paired with the peer; training until every Worker has succeeded."},
  FLStateComplete = {"Healthy", "every Worker succeeded."},
  FLStateFailing = {"Degraded", "the job failed (a PS failed, more pod failures than spec.backoffLimit, or spec.activeDeadlineSeconds passed); the operator is shutting down the peer. See the FLApp's events and the failed pods."},
  FLStateShutDown = {"Degraded", "the job failed; the peer is shut down and the operator is deleting the pods and Services. See the FLApp's events."},
  FLStateFailed = {"Degraded", "the job failed (a PS failed, more pod failures than spec.backoffLimit, or spec.activeDeadlineSeconds passed). See the FLApp's events and the operator's log; to run it again, delete the FLApp and sync."},
}

local hs = {}
local status = obj.status
if status == nil or status.appState == nil or status.appState == "" then
  hs.status = "Progressing"
  hs.message = "Waiting for the fedlearner operator: no status.appState yet. If this lasts, check that the operator runs and watches this namespace."
  return hs
end

local state = states[status.appState]
if state == nil then
  hs.status = "Unknown"
  hs.message = "Unknown status.appState " .. tostring(status.appState) .. "; this health check knows the states FLStateNew to FLStateFailed of fedlearner's operator." .. replicaCounts(status)
  return hs
end
hs.status = state[1]
hs.message = status.appState .. ": " .. state[2] .. replicaCounts(status)
return hs
