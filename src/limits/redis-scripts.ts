// The Lua scripts of the Redis limiter (src/limits/redis.ts): each check-and-take or correction is one
// atomic script. Keys of one API key share a {key id} hash tag (Redis Cluster). Money is integer
// nano-dollars; numbers computed in Lua are written with %.0f (tostring would print 1e+14).
//
// A budget's spend counter (sk, a string) has a meta hash (mk): `e` its epoch, a new one each time the
// counter is created, so a settlement can tell whether its reservation is in the counter it meets. While
// the counter is provisional (`p` = 1, created from a replica's last view after Redis lost it), `b` is the
// base it started from, `t0` when, `le` when the re-seeding replica's lease ends, and with no view at all
// `u` = 1 and `o` the open reservations admitted meanwhile (one at a time). pk marks the period a key's
// counter was last created for: a missing counter under an older mark is a new period, not a loss.
// A minute's window (requests and tokens) is rebuilt and re-seeded the same way (see ACQUIRE).
//
// A counter's open reservations are known (ok, a hash token -> estimate nanos, 'u' first when admitted
// without a view) with a lease per replica (lk, a sorted set instance -> lease end on Redis's own TIME,
// ms): a replica renews the leases of the counters where it holds reservations (RENEW, every presence
// interval), and an acquire, a renewal or a sweep (SWEEP, of the counters in the lease index whose
// holders stopped renewing) that meets another replica's lapsed lease releases that replica's open
// reservations (returns their estimates to the counter) and moves their tokens to rk (released, kept
// for a while): a late settlement of one (its replica was only paused) adds its whole cost, not a delta
// against an estimate the counter no longer holds. ok is cleared and stamped with a new generation
// (`g`, also in the meta) whenever the counter is created, so it lists only estimates the counter
// holds, and a settlement can tell a released token whose record expired from a held one (LISTS).
import { createHash } from 'node:crypto';

// KEYS: window hash, spend counter, spend meta, period mark, window mark.
// ARGV: 1 rpm, 2 tpm, 3 budget nanos (-1: none), 4 tokens, 5 cost nanos, 6 window ttl ms, 7 counter ttl s
// (0: none), 8 '1' when the counter may be rebuilt here (the limiter has a store), 9 reservation token
// (also the epoch of a counter or window created here), 10 period start, 11 the caller's last view of the
// counter ('' none), 12 now ms, 13 lease ms, 14 mark ttl s, 15 the caller's last view of this minute's
// window ('requests:tokens', '' none), 16 the minute, 17 '1' when the window may be rebuilt here (a store,
// and an rpm or tpm limit), 18 and 19 the epochs of the window and the counter those views were seen in (a
// view raises a provisional base only when it predates it: one seen in the provisional window or counter
// itself already counts there).
// KEYS 6, 7, 8: the counter's open reservations, leases and released tokens; ARGV 20 this replica's
// instance, 21 its lease ms, 22 how long released tokens are kept (ms).
// Returns {code, spend, epoch, reseed, under, t0, window epoch, window reseed, window t0, requests, tokens}:
// code 0 admitted, 1 rpm, 2 tpm, 3 budget, 6 provisional without a view and a reservation already open;
// reseed 1 asks the caller to re-seed the counter (from t0), window reseed 1 the minute's window.
// Nothing is taken on refusal. A budgeted request leaves its token in the window hash (see UNCERTAIN).
//
// The window hash holds `r` requests, `t` tokens and `e` its epoch (new each time it is created); the
// window mark (wm) the last minute a window was created for the key. A missing window under a mark of
// an earlier minute is a new minute; under this minute's mark, or no mark at all (Redis lost its data, or
// a key never seen), it is rebuilt provisional (`p` = 1) from the caller's view of it (`br`, `bt` its
// base, `t0`, `le` as for a counter) and re-seeded from the store's records of the minute.
// Redis's own clock in ms, which leases are written and read in (the replicas' clocks may disagree).
const NOW_MS = `
local function nowMs()
  local tm = redis.call('TIME')
  return tonumber(tm[1]) * 1000 + math.floor(tonumber(tm[2]) / 1000)
end`;

// A counter's open list against its generation (a field `g` in the meta and in the list, written together
// whenever this code creates a counter): 'ok' when the list is stamped with the counter's generation;
// 'legacy' when neither is stamped (a counter created before generations: stop 36's rules); 'lost' when
// the counter is stamped and the list is not (Redis lost the list and kept the counter: nothing in it can
// be released, since a settlement could not tell its released token from a held one). A list stamped with
// another generation is stale (a replica that does not know lists recreated the counter and left the old
// list): its entries are dropped, not released (the counter never held them), and the list is stamped
// anew (`gen`), so 'ok'.
const LISTS = `
local function openList(sk, mk, ok, gen)
  local lg = redis.call('HGET', ok, 'g')
  local cg = redis.call('HGET', mk, 'g')
  if lg then
    if lg == cg then return 'ok' end
    redis.call('DEL', ok)
    redis.call('HSET', mk, 'g', gen)
    redis.call('HSET', ok, 'g', gen)
    local ttl = redis.call('PTTL', sk)
    if ttl > 0 then redis.call('PEXPIRE', mk, ttl); redis.call('PEXPIRE', ok, ttl) end
    return 'ok'
  end
  if cg then return 'lost' end
  return 'legacy'
end
-- Releases the open reservations of every other replica (not \`self\`) whose lease on the counter lapsed,
-- once: their tokens leave the list in the same step and are kept as released for \`keep\` ms. Returns
-- Redis's time (ms), which leases are written in.
local function reclaim(sk, mk, ok, lk, rk, self, keep)
  local ms = nowMs()
  local lapsed = redis.call('ZRANGEBYSCORE', lk, '-inf', '(' .. string.format('%.0f', ms))
  local dead, any = {}, false
  for _, inst in ipairs(lapsed) do
    if inst ~= self then dead[inst] = true; any = true; redis.call('ZREM', lk, inst) end
  end
  if not any then return ms end
  local open = redis.call('HGETALL', ok)
  local back, unders, moved = 0, 0, 0
  for i = 1, #open, 2 do
    local inst = string.match(open[i], '^x:([^:]+):')
    if inst and dead[inst] then
      local v = open[i + 1]
      if string.sub(v, 1, 1) == 'u' then unders = unders + 1; v = string.sub(v, 2) end
      back = back + (tonumber(v) or 0)
      redis.call('HDEL', ok, open[i])
      redis.call('HSET', rk, open[i], v)
      moved = moved + 1
    end
  end
  if moved > 0 then redis.call('PEXPIRE', rk, keep) end
  if back > 0 and tonumber(redis.call('INCRBY', sk, string.format('%.0f', -back))) < 0 then redis.call('SET', sk, 0, 'KEEPTTL') end
  if unders > 0 then redis.call('HINCRBY', mk, 'o', -unders) end
  return ms
end`;

const ACQUIRE = `${NOW_MS}${LISTS}
local now = tonumber(ARGV[12])
local wepoch, wreseed, wt0 = '', 0, ''
-- The caller's view of this minute's window, 'requests:tokens'.
local function windowView()
  local c = string.find(ARGV[15], ':', 1, true)
  return tonumber(string.sub(ARGV[15], 1, c - 1)), tonumber(string.sub(ARGV[15], c + 1))
end
-- A provisional window or counter whose re-seeding lease ended: this caller takes the lease over and
-- re-seeds it from its t0. Returns 1 and that t0, or 0.
local function claimLease(key)
  if tonumber(redis.call('HGET', key, 'le') or '0') >= now then return 0, '' end
  redis.call('HSET', key, 'le', string.format('%.0f', now + tonumber(ARGV[13])))
  return 1, redis.call('HGET', key, 't0') or ARGV[12]
end
if redis.call('EXISTS', KEYS[1]) == 0 then
  local seen = redis.call('GET', KEYS[5])
  wepoch = ARGV[9]
  if ARGV[17] == '1' and (not seen or seen == ARGV[16]) then
    local vr, vt = 0, 0
    if ARGV[15] ~= '' then vr, vt = windowView() end
    redis.call('HSET', KEYS[1], 'r', string.format('%.0f', vr), 't', string.format('%.0f', vt), 'e', wepoch, 'p', '1',
      'br', string.format('%.0f', vr), 'bt', string.format('%.0f', vt), 't0', ARGV[12], 'le', string.format('%.0f', now + tonumber(ARGV[13])))
    wreseed = 1
    wt0 = ARGV[12]
  else
    redis.call('HSET', KEYS[1], 'e', wepoch)
  end
  redis.call('PEXPIRE', KEYS[1], ARGV[6])
  redis.call('SET', KEYS[5], ARGV[16], 'EX', ARGV[14])
else
  local w = redis.call('HMGET', KEYS[1], 'e', 'p')
  wepoch = w[1] or ''
  if w[2] == '1' then
    if ARGV[15] ~= '' and ARGV[18] ~= wepoch then
      local vr, vt = windowView()
      local b = redis.call('HMGET', KEYS[1], 'br', 'bt')
      local br, bt = tonumber(b[1] or '0'), tonumber(b[2] or '0')
      if vr > br then redis.call('HINCRBY', KEYS[1], 'r', string.format('%.0f', vr - br)); redis.call('HSET', KEYS[1], 'br', string.format('%.0f', vr)) end
      if vt > bt then redis.call('HINCRBY', KEYS[1], 't', string.format('%.0f', vt - bt)); redis.call('HSET', KEYS[1], 'bt', string.format('%.0f', vt)) end
    end
    wreseed, wt0 = claimLease(KEYS[1])
  end
end
local r = tonumber(redis.call('HGET', KEYS[1], 'r') or '0')
local t = tonumber(redis.call('HGET', KEYS[1], 't') or '0')
local rpm, tpm, budget = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local et, en = tonumber(ARGV[4]), tonumber(ARGV[5])
local epoch, reseed, under, t0 = '', 0, 0, ''
local function out(code, spend)
  return {code, spend, epoch, reseed, under, t0, wepoch, wreseed, wt0, string.format('%.0f', r), string.format('%.0f', t)}
end
if rpm > 0 and r + 1 > rpm then return out(1, '0') end
if tpm > 0 and t + et > tpm then return out(2, '0') end
if budget >= 0 then
  local sttl = tonumber(ARGV[7])
  if ARGV[8] == '1' then
    if redis.call('EXISTS', KEYS[2]) == 0 then
      local seen = redis.call('GET', KEYS[4])
      epoch = ARGV[9]
      redis.call('DEL', KEYS[3], KEYS[6])
      redis.call('HSET', KEYS[6], 'g', epoch)
      if seen and seen ~= ARGV[10] then
        redis.call('SET', KEYS[2], '0')
        redis.call('HSET', KEYS[3], 'e', epoch, 'g', epoch)
      else
        local base = ARGV[11] == '' and '0' or ARGV[11]
        redis.call('SET', KEYS[2], base)
        redis.call('HSET', KEYS[3], 'e', epoch, 'g', epoch, 'p', '1', 'b', base, 't0', ARGV[12], 'le', string.format('%.0f', now + tonumber(ARGV[13])))
        if ARGV[11] == '' then redis.call('HSET', KEYS[3], 'u', '1', 'o', '0') end
        reseed = 1
        t0 = ARGV[12]
      end
      if sttl > 0 then redis.call('EXPIRE', KEYS[2], sttl); redis.call('EXPIRE', KEYS[3], sttl); redis.call('EXPIRE', KEYS[6], sttl) end
      redis.call('SET', KEYS[4], ARGV[10], 'EX', ARGV[14])
    else
      epoch = redis.call('HGET', KEYS[3], 'e') or ''
      if redis.call('HGET', KEYS[3], 'p') == '1' then
        local b = tonumber(redis.call('HGET', KEYS[3], 'b') or '0')
        if ARGV[11] ~= '' and ARGV[19] ~= epoch and tonumber(ARGV[11]) > b then
          redis.call('INCRBY', KEYS[2], string.format('%.0f', tonumber(ARGV[11]) - b))
          redis.call('HSET', KEYS[3], 'b', ARGV[11])
          redis.call('HDEL', KEYS[3], 'u')
        end
        reseed, t0 = claimLease(KEYS[3])
      end
    end
  elseif redis.call('EXISTS', KEYS[2]) == 0 then
    -- Without a store the counter is created by the first spend below: its list starts empty, stamped.
    redis.call('DEL', KEYS[3], KEYS[6])
    redis.call('HSET', KEYS[3], 'g', ARGV[9])
    redis.call('HSET', KEYS[6], 'g', ARGV[9])
    if sttl > 0 then redis.call('EXPIRE', KEYS[3], sttl); redis.call('EXPIRE', KEYS[6], sttl) end
  end
  local ms
  if openList(KEYS[2], KEYS[3], KEYS[6], ARGV[9]) == 'lost' then ms = nowMs()
  else ms = reclaim(KEYS[2], KEYS[3], KEYS[6], KEYS[7], KEYS[8], ARGV[20], ARGV[22]) end
  if ARGV[8] == '1' and redis.call('HGET', KEYS[3], 'u') == '1' then
    if tonumber(redis.call('HGET', KEYS[3], 'o') or '0') > 0 then return out(6, '0') end
    under = 1
  end
  local s = tonumber(redis.call('GET', KEYS[2]) or '0')
  if s >= budget or s + en > budget then return out(3, redis.call('GET', KEYS[2]) or '0') end
  redis.call('INCRBY', KEYS[2], ARGV[5])
  redis.call('HSET', KEYS[6], ARGV[9], (under == 1 and 'u' or '') .. ARGV[5])
  redis.call('ZADD', KEYS[7], string.format('%.0f', ms + tonumber(ARGV[21])), ARGV[20])
  if sttl > 0 then
    redis.call('EXPIRE', KEYS[2], sttl); redis.call('EXPIRE', KEYS[6], sttl); redis.call('EXPIRE', KEYS[7], sttl)
  end
  if under == 1 then redis.call('HINCRBY', KEYS[3], 'o', 1) end
  redis.call('HSET', KEYS[1], ARGV[9], '1')
end
r = redis.call('HINCRBY', KEYS[1], 'r', 1)
t = redis.call('HINCRBY', KEYS[1], 't', et)
redis.call('PEXPIRE', KEYS[1], ARGV[6])
local spend = '0'
if budget >= 0 then spend = redis.call('GET', KEYS[2]) or '0' end
return out(0, spend)`;

// KEYS: window hash, spend counter, spend meta, open reservations, released tokens. ARGV: 1 token
// delta, 2 cost delta (actual - estimate), 3 token, 4 the reservation's epoch, 5 actual cost, 6 '1' if
// admitted without a view, 7 the window's epoch when admitted, 8 actual tokens, 9 '1' to count the
// request in a window rebuilt without it, 10 '1' when this is a settlement sent again because its first
// answer was lost (a timeout: Redis may have run it): it applies only while the reservation's token is
// still open, released, or in the window hash, i.e. once.
// A counter (or window) of the reservation's epoch takes the delta; one created since (Redis lost the
// other, and a re-seed that did not know this reservation rebuilt it) takes the whole actual cost (the
// request and its tokens), and so does one that released the reservation (its replica's lease lapsed):
// its token kept as released, or, that record expired, missing from a list of the counter's generation
// (LISTS). A list Redis lost ('lost', 'legacy') releases nothing and its tokens settle as deltas.
const ADJUST = `
local inWindow, held, released = false, false, false
if ARGV[3] ~= '' then
  inWindow = redis.call('HDEL', KEYS[1], ARGV[3]) == 1
  held = redis.call('HDEL', KEYS[4], ARGV[3]) == 1
  released = not held and redis.call('HDEL', KEYS[5], ARGV[3]) == 1
  if ARGV[10] == '1' and not (inWindow or held or released) then return 0 end
  -- Neither open nor kept as released, in a list stamped with the counter's generation: released, and
  -- its record expired since (a replica paused longer than that). Its estimate is not in the counter.
  if not held and not released then
    local lg = redis.call('HGET', KEYS[4], 'g')
    released = lg and lg == redis.call('HGET', KEYS[3], 'g') or false
  end
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  if (redis.call('HGET', KEYS[1], 'e') or '') == ARGV[7] then
    if ARGV[1] ~= '0' and tonumber(redis.call('HINCRBY', KEYS[1], 't', ARGV[1])) < 0 then redis.call('HSET', KEYS[1], 't', 0) end
  elseif ARGV[9] == '1' then
    redis.call('HINCRBY', KEYS[1], 'r', 1)
    redis.call('HINCRBY', KEYS[1], 't', ARGV[8])
  end
end
if redis.call('EXISTS', KEYS[2]) == 1 then
  local same = (redis.call('HGET', KEYS[3], 'e') or '') == ARGV[4] and not released
  if same and ARGV[6] == '1' then redis.call('HINCRBY', KEYS[3], 'o', -1) end
  local d = same and ARGV[2] or ARGV[5]
  if d ~= '0' then
    if tonumber(redis.call('INCRBY', KEYS[2], d)) < 0 then redis.call('SET', KEYS[2], 0, 'KEEPTTL') end
  end
end
return 0`;

// Adds spend admitted while Redis was unreachable (ARGV[1]) to its counter. A missing counter under the
// period mark of an earlier period is a period that began while Redis was away: created holding that
// spend (KEYS 2 to 4 its meta, the mark and the open reservations; ARGV 2 the period start, 3 the new
// epoch, 4 counter ttl s (0 none), 5 mark ttl s; without them, never created). One lost in its period,
// or with no mark (Redis lost its data), is not: 0, and it is rebuilt from the replica's view, which
// holds that spend, and re-seeded from the store, whose records hold it too.
const RECONCILE = `
if redis.call('EXISTS', KEYS[1]) == 0 then
  local seen = KEYS[3] and redis.call('GET', KEYS[3])
  if not seen or tonumber(seen) >= tonumber(ARGV[2]) then return 0 end
  redis.call('DEL', KEYS[2], KEYS[4])
  redis.call('SET', KEYS[1], ARGV[1])
  redis.call('HSET', KEYS[2], 'e', ARGV[3], 'g', ARGV[3])
  redis.call('HSET', KEYS[4], 'g', ARGV[3])
  if tonumber(ARGV[4]) > 0 then redis.call('EXPIRE', KEYS[1], ARGV[4]); redis.call('EXPIRE', KEYS[2], ARGV[4]); redis.call('EXPIRE', KEYS[4], ARGV[4]) end
  redis.call('SET', KEYS[3], ARGV[2], 'EX', ARGV[5])
  return 1
end
if tonumber(redis.call('INCRBY', KEYS[1], ARGV[1])) < 0 then redis.call('SET', KEYS[1], 0, 'KEEPTTL') end
return 1`;

// Settles a request whose acquire failed on the client side (timeout, dropped connection) after being
// sent: if its token is open on the counter (or, the open list lost, in the minute's hash) the
// reservation was taken and ARGV[2] (actual - estimate) applies, else ARGV[3] (actual), as when it was
// taken and then released (its lease lapsed). Deltas come as strings: Lua would print large numbers in
// exponent form. KEYS: window hash, counter, meta, open reservations, released tokens.
const UNCERTAIN = `
local taken = redis.call('HDEL', KEYS[1], ARGV[1]) == 1
local open = redis.call('HGET', KEYS[4], ARGV[1])
local released = false
if open then
  redis.call('HDEL', KEYS[4], ARGV[1])
  taken = true
  if string.sub(open, 1, 1) == 'u' then redis.call('HINCRBY', KEYS[3], 'o', -1) end
elseif redis.call('HDEL', KEYS[5], ARGV[1]) == 1 then
  taken = false
end
local d = taken and ARGV[2] or ARGV[3]
if d ~= '0' and redis.call('EXISTS', KEYS[2]) == 1 then
  if tonumber(redis.call('INCRBY', KEYS[2], d)) < 0 then redis.call('SET', KEYS[2], 0, 'KEEPTTL') end
end
return 0`;

// At start (and when keys change): a counter already in Redis wins (it holds other replicas' open
// reservations). A missing one in a new period is set from the store; one missing in the period its
// mark names, or with no mark (Redis lost it, or never had it), is made provisional from the larger of
// the store's spend and the caller's last view (which holds its open reservations; the store alone lacks
// those and the records still queued) and re-seeded like one ACQUIRE rebuilt. KEYS: counter, meta, mark.
// ARGV: 1 store spend, 2 counter ttl s (0 none), 3 epoch, 4 period start, 5 mark ttl s, 6 the caller's
// last view ('' none), 7 now ms, 8 lease ms. KEYS[4]: the open reservations, cleared with a counter
// created here. Returns {counter, reseed, epoch}.
const SEED = `
local reseed = 0
if redis.call('EXISTS', KEYS[1]) == 0 then
  local seen = redis.call('GET', KEYS[3])
  redis.call('DEL', KEYS[2], KEYS[4])
  redis.call('HSET', KEYS[4], 'g', ARGV[3])
  if seen and seen ~= ARGV[4] then
    redis.call('SET', KEYS[1], ARGV[1])
    redis.call('HSET', KEYS[2], 'e', ARGV[3], 'g', ARGV[3])
  else
    local base = ARGV[1]
    if ARGV[6] ~= '' and tonumber(ARGV[6]) > tonumber(base) then base = ARGV[6] end
    redis.call('SET', KEYS[1], base)
    redis.call('HSET', KEYS[2], 'e', ARGV[3], 'g', ARGV[3], 'p', '1', 'b', base, 't0', ARGV[7], 'le', string.format('%.0f', tonumber(ARGV[7]) + tonumber(ARGV[8])))
    reseed = 1
  end
  if tonumber(ARGV[2]) > 0 then redis.call('EXPIRE', KEYS[1], ARGV[2]); redis.call('EXPIRE', KEYS[2], ARGV[2]); redis.call('EXPIRE', KEYS[4], ARGV[2]) end
end
redis.call('SET', KEYS[3], ARGV[4], 'EX', ARGV[5])
return {redis.call('GET', KEYS[1]), reseed, redis.call('HGET', KEYS[2], 'e') or ''}`;

// Ends a re-seed: the provisional counter of epoch ARGV[1] moves from its base to the true base ARGV[2]
// (store + this replica's unwritten records + its open reservations of earlier epochs), keeping what was
// admitted on it meanwhile. 0 when it is no longer that provisional counter (lost again, or corrected by
// a replica that took the lease over). KEYS: counter, meta, open reservations, leases. ARGV 3: this
// replica's instance, 4 its lease ms, then token, estimate pairs of those earlier reservations, which
// the counter now holds: listed open, under this replica's lease, so they are released if it dies.
const CORRECT = `${NOW_MS}
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if (redis.call('HGET', KEYS[2], 'e') or '') ~= ARGV[1] or redis.call('HGET', KEYS[2], 'p') ~= '1' then return 0 end
local d = tonumber(ARGV[2]) - tonumber(redis.call('HGET', KEYS[2], 'b') or '0')
if d ~= 0 then
  if tonumber(redis.call('INCRBY', KEYS[1], string.format('%.0f', d))) < 0 then redis.call('SET', KEYS[1], 0, 'KEEPTTL') end
end
redis.call('HDEL', KEYS[2], 'p', 'b', 'u', 'o', 't0', 'le')
if #ARGV > 4 then
  for i = 5, #ARGV, 2 do redis.call('HSET', KEYS[3], ARGV[i], ARGV[i + 1]) end
  redis.call('ZADD', KEYS[4], string.format('%.0f', nowMs() + tonumber(ARGV[4])), ARGV[3])
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl > 0 then redis.call('PEXPIRE', KEYS[3], ttl); redis.call('PEXPIRE', KEYS[4], ttl) end
end
return 1`;

// Renews a replica's lease on a counter where it holds open reservations (every presence interval):
// the lease ends ARGV[2] ms from Redis's time. It sweeps the counter first (as SWEEP): a counter with a
// live holder stays ahead in the lease index, so a dead replica's reservations beside a live one's are
// released by the live one's renewal. KEYS: counter, leases, meta, open reservations, released tokens.
// ARGV[1]: the instance, 3 how long released tokens are kept, 4 a generation for a stale list. Nothing
// for a counter that is gone (its reservations went with it).
const RENEW = `${NOW_MS}${LISTS}
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local ms
if openList(KEYS[1], KEYS[3], KEYS[4], ARGV[4]) == 'lost' then ms = nowMs()
else ms = reclaim(KEYS[1], KEYS[3], KEYS[4], KEYS[2], KEYS[5], ARGV[1], ARGV[3]) end
redis.call('ZADD', KEYS[2], string.format('%.0f', ms + tonumber(ARGV[2])), ARGV[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl) end
return 1`;

// Ends a window's re-seed: the provisional window of epoch ARGV[1] moves from its base to the true
// requests ARGV[2] and tokens ARGV[3] of the minute up to the loss (store + this replica's unwritten
// records + its open reservations of earlier epochs), keeping what was admitted meanwhile. 0 when it is
// no longer that provisional window. KEYS: window hash.
const CORRECT_WINDOW = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local w = redis.call('HMGET', KEYS[1], 'e', 'p', 'br', 'bt')
if (w[1] or '') ~= ARGV[1] or w[2] ~= '1' then return 0 end
for i, f in ipairs({'r', 't'}) do
  local d = tonumber(ARGV[i + 1]) - tonumber(w[i + 2] or '0')
  if d ~= 0 and tonumber(redis.call('HINCRBY', KEYS[1], f, string.format('%.0f', d))) < 0 then redis.call('HSET', KEYS[1], f, 0) end
end
redis.call('HDEL', KEYS[1], 'p', 'br', 'bt', 't0', 'le')
return 1`;

// Adds requests and tokens left out of a window (ARGV 1, 2) to it. A missing window under the mark of
// an earlier minute is a minute that began while Redis was away: created holding them (ARGV 3 the
// minute, 4 its epoch, 5 window ttl ms, 6 mark ttl s; without them, never created). One lost in its
// minute, or with no mark (Redis lost its data), is not: 0, and the caller adds them to its view, which
// rebuilds it. KEYS: window hash, window mark.
const RECONCILE_WINDOW = `
if redis.call('EXISTS', KEYS[1]) == 0 then
  local seen = ARGV[3] and redis.call('GET', KEYS[2])
  if not seen or seen == ARGV[3] then return 0 end
  redis.call('HSET', KEYS[1], 'e', ARGV[4])
  redis.call('PEXPIRE', KEYS[1], ARGV[5])
  redis.call('SET', KEYS[2], ARGV[3], 'EX', ARGV[6])
end
redis.call('HINCRBY', KEYS[1], 'r', ARGV[1])
redis.call('HINCRBY', KEYS[1], 't', ARGV[2])
return 1`;

// The sweep of one counter by a live replica (no acquire needed): releases the open reservations of
// other replicas whose lease lapsed, as an acquire would (once, however many sweep at the same time:
// one script at a time). KEYS: counter, meta, open reservations, leases, released tokens. ARGV: 1 the
// sweeping replica, 2 how long released tokens are kept (ms), 3 a generation for a stale list restamped.
// Returns 1 while reservations stay open on the counter under a lease (it stays in the index), else 0:
// entries under no lease at all (Redis lost the leases) can never lapse, so sweeping them again is
// for nothing (a holder still alive renews its lease and puts the counter back).
const SWEEP = `${NOW_MS}${LISTS}
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if openList(KEYS[1], KEYS[2], KEYS[3], ARGV[3]) == 'lost' then return 0 end
reclaim(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], ARGV[1], ARGV[2])
if redis.call('ZCARD', KEYS[4]) > 0 and redis.call('HLEN', KEYS[3]) > redis.call('HEXISTS', KEYS[3], 'g') then return 1 end
return 0`;

// The index of counters that may hold open reservations (KEYS[1], a sorted set counter -> when to sweep
// it, on Redis's clock): a replica holding reservations on counters ARGV 4... pushes them to ARGV[1] ms
// from now (only later, GT: another holder may hold longer), then, ARGV[3] > 0, claims up to ARGV[3]
// counters due, pushing each ARGV[2] ms on so that replicas sweeping at the same time take different
// ones. Returns {the claims' score, counters claimed...}. A key of another type in its place (nothing the
// gateway writes) is replaced: else every push, claim and acquire's ZADD failed (WRONGTYPE) and no dead
// replica's reservation was swept again; the live holders push their counters back at once.
const INDEX = `${NOW_MS}
local kind = redis.call('TYPE', KEYS[1])['ok']
if kind ~= 'zset' and kind ~= 'none' then redis.call('DEL', KEYS[1]) end
local now = nowMs()
local hold = string.format('%.0f', now + tonumber(ARGV[1]))
for i = 4, #ARGV do redis.call('ZADD', KEYS[1], 'GT', hold, ARGV[i]) end
local claim = string.format('%.0f', now + tonumber(ARGV[2]))
local out = {claim}
if tonumber(ARGV[3]) > 0 then
  local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', string.format('%.0f', now), 'LIMIT', 0, tonumber(ARGV[3]))
  for _, sk in ipairs(due) do redis.call('ZADD', KEYS[1], claim, sk); out[#out + 1] = sk end
end
return out`;

// Drops counters ARGV 2... that a sweep found with nothing open from the index (KEYS[1]), unless a holder
// pushed one since the claim (its score is no longer the claim's, ARGV[1]): it has opened one meanwhile.
const UNINDEX = `
for i = 2, #ARGV do
  local at = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if at and tonumber(at) == tonumber(ARGV[1]) then redis.call('ZREM', KEYS[1], ARGV[i]) end
end
return 0`;

// A replica's presence mark (KEYS[1], a sorted set instance -> when its mark lapses, on Redis's clock):
// ARGV[1] the instance, ARGV[2] how long its mark lasts (ms: three of its presence intervals). Drops the
// lapsed marks (a further ARGV[2] on) and returns the count left. Each mark lapses by its own replica's interval and Redis's
// clock: before, each replica dropped marks older than three of its own intervals by its own clock, so a
// replica ticking every 100 ms dropped one ticking every second, and a clock running behind dropped its
// replica from every count (in fail open each took a share of what was left too large).
const PRESENCE = `${NOW_MS}
local now = nowMs()
redis.call('ZADD', KEYS[1], string.format('%.0f', now + tonumber(ARGV[2])), ARGV[1])
-- Dropped a further ARGV[2] after they lapse: an older version's mark is the time it was made, which
-- this keeps as long as the older replica itself did (a dead replica counted a little longer: the safe side).
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. string.format('%.0f', now - tonumber(ARGV[2])))
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return redis.call('ZCARD', KEYS[1])`;

export const SCRIPTS = {
  acquire: ACQUIRE, adjust: ADJUST, reconcile: RECONCILE, uncertain: UNCERTAIN, seed: SEED, correct: CORRECT,
  correctWindow: CORRECT_WINDOW, reconcileWindow: RECONCILE_WINDOW, renew: RENEW, sweep: SWEEP, index: INDEX, unindex: UNINDEX, presence: PRESENCE,
} as const;
export type ScriptName = keyof typeof SCRIPTS;

const sha1 = (s: string): string => createHash('sha1').update(s).digest('hex');
export const SHAS: Readonly<Record<ScriptName, string>> = Object.fromEntries(Object.entries(SCRIPTS).map(([k, v]) => [k, sha1(v)])) as Record<ScriptName, string>;
