//! The Lua scripts of a [`RedisStore`](super::RedisStore), one per operation, and the
//! [`Scripts`] a store loads once.

use ::redis::Script;

/// Claims the key if it is free, stamping the pending value with the server's time
/// (`since`), for the short lease until it is confirmed; takes it over if it is pending with
/// the caller's own token and older than the caller's bound (a confirmed claim then lasts at
/// least that bound again, as long as the call can run; one never confirmed is claimed
/// afresh); answers a claim left abandoned with its time left; otherwise returns what holds
/// it.
///
/// KEYS[1]: the key. ARGV[1]: the pending value. ARGV[2]: the lease in milliseconds.
/// ARGV[3]: the caller's own token, or empty. ARGV[4]: after how many milliseconds a claim
/// with that token is abandoned. Returns `{'claimed'}` (to be confirmed), `{'taken_over'}`,
/// `{'abandoned', <PTTL>}` or `{'found', <value>}`.
const CLAIM_SCRIPT: &str = r#"
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local pending = cjson.decode(ARGV[1])
pending.since = now
local fresh = cjson.encode(pending)
if redis.call('SET', KEYS[1], fresh, 'NX', 'PX', ARGV[2]) then
  return {'claimed'}
end
local found = redis.call('GET', KEYS[1])
-- A result (written by the store, its tag first) is answered without decoding it.
if string.sub(found, 1, 15) == '{"state":"done"' then
  return {'found', found}
end
local ok, held = pcall(cjson.decode, found)
if ok and type(held) == 'table' and held.state == 'pending' then
  if held.abandoned then
    return {'abandoned', tostring(redis.call('PTTL', KEYS[1]))}
  end
  if ARGV[3] ~= '' and held.holder == ARGV[3] and type(held.since) == 'number'
      and now - held.since >= tonumber(ARGV[4]) then
    if held.confirmed == false then
      redis.call('SET', KEYS[1], fresh, 'PX', ARGV[2])
      return {'claimed'}
    end
    held.since = now
    held.lease = pending.lease
    redis.call('SET', KEYS[1], cjson.encode(held), 'KEEPTTL')
    if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[4]) then
      redis.call('PEXPIRE', KEYS[1], ARGV[4])
    end
    return {'taken_over'}
  end
end
return {'found', found}
"#;

/// The pending value of KEYS[1] if it is held by the claim `lease`, else false (shared by
/// confirm, complete, release and abandon).
const HELD_BY: &str = r"
local function held_by(key, lease)
  local current = redis.call('GET', key)
  if not current then
    return false
  end
  local ok, value = pcall(cjson.decode, current)
  if ok and type(value) == 'table' and value.state == 'pending' and value.lease == lease then
    return value
  end
  return false
end
";

/// Confirms a claim its claimer heard answered: the key gets the rest of the window, counted
/// from the claim. Applied only within `ARGV[3]` milliseconds of the claim (`since`): later,
/// the claimer has given up and the claim is left to lapse with its lease.
///
/// KEYS[1]: the key. ARGV[1]: the claim's lease. ARGV[2]: the window in milliseconds.
/// ARGV[3]: how long after the claim a confirmation is still heard, in milliseconds. Returns 1
/// when confirmed.
const CONFIRM_BODY: &str = r"
local value = held_by(KEYS[1], ARGV[1])
if value and value.confirmed == false and type(value.since) == 'number' then
  local time = redis.call('TIME')
  local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  local age = math.max(now - value.since, 0)
  if age <= tonumber(ARGV[3]) then
    value.confirmed = true
    local left = math.max(tonumber(ARGV[2]) - age, 1)
    redis.call('SET', KEYS[1], cjson.encode(value), 'PX', string.format('%.0f', left))
    return 1
  end
end
return 0
";

/// Keeps the result if the claim still holds the key, keeping the key's remaining time.
///
/// KEYS[1]: the key. ARGV[1]: the claim's lease. ARGV[2]: the done value. Returns 1 when kept.
const COMPLETE_BODY: &str = r"
if held_by(KEYS[1], ARGV[1]) then
  redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
  return 1
end
return 0
";

/// Deletes the key if the claim still holds it.
///
/// KEYS[1]: the key. ARGV[1]: the claim's lease. Returns 1 when deleted.
const RELEASE_BODY: &str = r"
if held_by(KEYS[1], ARGV[1]) then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
";

/// Marks the claim abandoned, if it still holds the key, and gives it a token no call holds:
/// a run stopped mid-flight leaves it to its window, never to a takeover, and a claim on it is
/// answered at once.
///
/// KEYS[1]: the key. ARGV[1]: the claim's lease. ARGV[2]: the new token. Returns 1 when
/// changed.
const ABANDON_BODY: &str = r"
local value = held_by(KEYS[1], ARGV[1])
if value then
  value.holder = ARGV[2]
  value.abandoned = true
  redis.call('SET', KEYS[1], cjson.encode(value), 'KEEPTTL')
  return 1
end
return 0
";

/// Keeps a pending approval unless its id is already pending in the session.
///
/// KEYS[1]: the request's key. KEYS[2]: the session's index. KEYS[3]: the arrival counter.
/// ARGV[1]: the request, JSON. ARGV[2]: the ttl in milliseconds. ARGV[3]: the index member
/// (the escaped request id). Returns 1 when kept, 0 when the id is already pending.
const PUT_APPROVAL_SCRIPT: &str = r"
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  local seq = redis.call('INCR', KEYS[3])
  redis.call('ZADD', KEYS[2], seq, ARGV[3])
  if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[2]) then
    redis.call('PEXPIRE', KEYS[2], ARGV[2])
  end
  return 1
end
return 0
";

/// The session's pending approvals, oldest first; index entries whose request expired are
/// dropped.
///
/// KEYS[1]: the session's index. ARGV[1]: the request keys' common prefix (up to the id).
/// Returns the requests' JSON texts.
const PENDING_APPROVALS_SCRIPT: &str = r"
local ids = redis.call('ZRANGE', KEYS[1], 0, -1)
local found = {}
for _, id in ipairs(ids) do
  local value = redis.call('GET', ARGV[1] .. id)
  if value then
    found[#found + 1] = value
  else
    redis.call('ZREM', KEYS[1], id)
  end
end
return found
";

/// Removes and returns one pending approval.
///
/// KEYS[1]: the request's key. KEYS[2]: the session's index. ARGV[1]: the index member.
/// Returns the request's JSON, or nil when it is not pending.
const TAKE_APPROVAL_SCRIPT: &str = r"
local value = redis.call('GET', KEYS[1])
if value then
  redis.call('DEL', KEYS[1])
end
redis.call('ZREM', KEYS[2], ARGV[1])
return value
";

/// Appends one event to a run's record if the record holds exactly `position` events, and
/// gives the record the run ttl again.
///
/// KEYS[1]: the run's key. ARGV[1]: the position. ARGV[2]: the event, JSON. ARGV[3]: the ttl
/// in milliseconds. Returns `{1}` when appended, `{0, <events held>}` when not.
const APPEND_RUN_SCRIPT: &str = r"
local held = redis.call('LLEN', KEYS[1])
if held ~= tonumber(ARGV[1]) then
  return {0, held}
end
redis.call('RPUSH', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {1}
";

/// Keeps a route decision unless one is kept already, and returns the one kept (the first
/// recorded wins).
///
/// KEYS[1]: the decision's key. ARGV[1]: the decision, JSON. ARGV[2]: the ttl in
/// milliseconds. Returns the kept decision's JSON.
const RECORD_DECISION_SCRIPT: &str = r"
redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])
return redis.call('GET', KEYS[1])
";

/// The scripts, loaded once per store, with their sources (to load them all in one round
/// trip).
pub(super) struct Scripts {
    pub(super) claim: Script,
    pub(super) confirm: Script,
    pub(super) complete: Script,
    pub(super) release: Script,
    pub(super) abandon: Script,
    pub(super) put_approval: Script,
    pub(super) pending_approvals: Script,
    pub(super) take_approval: Script,
    pub(super) append_run: Script,
    pub(super) record_decision: Script,
    pub(super) sources: [String; 10],
}

impl Scripts {
    pub(super) fn new() -> Self {
        let sources = [
            CLAIM_SCRIPT.to_owned(),
            format!("{HELD_BY}{CONFIRM_BODY}"),
            format!("{HELD_BY}{COMPLETE_BODY}"),
            format!("{HELD_BY}{RELEASE_BODY}"),
            format!("{HELD_BY}{ABANDON_BODY}"),
            PUT_APPROVAL_SCRIPT.to_owned(),
            PENDING_APPROVALS_SCRIPT.to_owned(),
            TAKE_APPROVAL_SCRIPT.to_owned(),
            APPEND_RUN_SCRIPT.to_owned(),
            RECORD_DECISION_SCRIPT.to_owned(),
        ];
        let [
            claim,
            confirm,
            complete,
            release,
            abandon,
            put_approval,
            pending_approvals,
            take_approval,
            append_run,
            record_decision,
        ] = sources.each_ref().map(|source| Script::new(source));
        Self {
            claim,
            confirm,
            complete,
            release,
            abandon,
            put_approval,
            pending_approvals,
            take_approval,
            append_run,
            record_decision,
            sources,
        }
    }
}
