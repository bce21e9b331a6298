//! models: semaphores/acquire.lua sha256=109bb011d3c42bbc
//! models: semaphores/release.lua sha256=21745602453d2211
//! models: semaphores/extend.lua sha256=36698ea1ef75c691
//! models: semaphores/resize.lua sha256=ad642bbc83541fad
//! models: semaphores/revoke.lua sha256=285bf4091b238dc9
//! models: semaphores/common.lua sha256=4221527503b6154d
//! models: common/waiters.lua sha256=b0138315490d0cf1
//! check: safety
//! check: ltl waiter_holds
//! mutant: PRUNE_EARLY expect: safety
//! mutant: RESIZE_IGNORES_HOLDERS expect: safety
//! mutant: EXTEND_EXPIRED expect: safety
//! mutant: NO_RENEW_OURS expect: safety
//! mutant: NO_FENCE_FLOOR expect: safety
//! mutant: FIRST_FROM_POP expect: safety
//! mutant: NO_RECHECK expect: waiter_holds
//! spin: -DCOLLAPSE -m100000
//
// A SEMAPHORE's leases (core/semaphores/semaphore.py on the shared hold steps, core/holds/steps.py
// and chain.py, driving semaphores/*.lua): three clients, two permits, a lease per permit, the
// FIFO queue with hand-offs through the `first` list, expiry, a crash, an operator's revoke and
// one resize (down to 1 or up to 3).
//
// Which action stands for what:
//   Client "send"      steps.py _acquire_steps: `sent = time.monotonic()` (look[i] = TTL) ...
//   acquire()          ... semaphores/acquire.lua run when it reaches the server: prune, "ours"
//                      (HGET h:<token> of a live lease: the lease is renewed to now + ttl, ZADD XX,
//                      as the caller counts it from `sent`; a lease of ours that ran out and was
//                      not pruned yet is dropped there: prune() takes at most 64 a call, in the
//                      model at most one), 'cancel' (LREM our place), fill() (free permits
//                      to the oldest live waiters first: no barging), then a grant to the caller
//                      while live leases < limit, else place_waiter + waiter_ahead (first in line:
//                      pending_ahead, the owner of the newest hand-off still on `first` if it holds,
//                      the hand-offs after it whose owner does not dropped; "ours" drops the
//                      caller's own hand-off, forget_hand_off), and the reply's
//                      floor = max(meta.fence, clock()): every hand-off made so far has a fence not
//                      above it, every later one a fence above it (grant(): max(fence + 1, now_us)).
//                      The model keeps no fence numbers: each `first` entry has a bit ffr, "above
//                      the floor of its token's last look", set when fill() pushes it and cleared
//                      for the caller's entries when acquire() replies not granted (the floor).
//   BLPOP branch       chain.py: the waiter first in line (ahead == '') pops `first`; a value for
//                      another token is consumed and costs a re-check (chain.py docstring); so does
//                      one of ours whose fence is not above the floor of our last look (steps.py
//                      `fence <= self._fence_floor(reply)`, FirstInLine._fence_floor: reply[3]):
//                      a stale hand-off, made before that look. One of ours above the floor is our
//                      grant, or (the server clock stepped back) is wrongly ignored too: consumed,
//                      re-check, which must then find the grant as "ours" (both branches are in the
//                      model). The others block on the wake list of the waiter ahead ('moved' = the
//                      "skip" branch: re-check, as for a timed-out BLPOP; 'first', pushed by a
//                      waiter that popped its own hand-off from `first`: block on `first` at once,
//                      without a look, with that look's floor and lease, steps.py
//                      FirstInLine._now_first; the model lets a waiter do so at any moment). A
//                      popped hand-off's lease is counted from `sent` of the last look (steps.py
//                      _grant_steps).
//   extend()           semaphores/extend.lua, the send merged into the script.
//   release()          semaphores/release.lua: not ours (no score, or expired) -> 0; else ZREM, fill.
//   crash              the client dies: its lease or place lapses.
//   Operator revoke    semaphores/revoke.lua on a live holder's fence: ZREM, fill; its holder is
//                      not told until its next extend/release (LockLost).
//   Operator resize    semaphores/resize.lua: `permits` := 1 or 3, fill.
//   Clock              a tick: leases (zset scores), places and the holders' own leases count down.
//
// A lease is live on the server while its score >= now (live_holders: ZCOUNT now..+inf; prune drops
// score < now). In ticks: while hleft > 0, and a holder's own view is valid[i] > 0 with
// valid <= hleft (the same clock rate, no drift).
//
// Properties (safety):
//   (1) every grant (fill or a direct grant) leaves at most `limit` live leases: the limit in force
//       at that moment (asserted in grant());
//   (2) a holder that believes it holds within its lease and was not revoked has a live lease on the
//       server (Monitor);
//   (3) what the code promises for resize: never more holders (as they see themselves, revoked ones
//       left out) than the limit in force, except that holders above a lower limit keep their leases
//       until they release them or the lease ends: at most max(limit, live leases at the resize)
//       (Monitor).
//
// Property (liveness, checked under weak fairness with -DLIVENESS, which tests/verify/run.py
// passes to a liveness check and its mutants, so the safety check keeps every pause):
//   ltl waiter_holds: client 0, which waits, never gives up or crashes while it waits, and looks
//       again at least once a tick (its BLPOP ends within min(chunk, pttl + 2 ms), steps.py: time
//       does not pass while its next look is overdue), ends up holding a permit, whatever the
//       others do (hold, extend, release, crash, give up, pause anywhere for any time), whatever
//       the operator does (revoke a lease, resize down to 1 or up to 3) and whatever is left on the
//       `first` list (stale hand-offs, another's hand-off popped by the wrong waiter).
//       (That bound holds because a look never reports a live lease as 0 ms left, which the waiter
//       reads as no bound at all and blocks a whole chunk: a lease in its last millisecond is
//       reported as 1 ms, see next_expiry and the PTTL of the acquire script.)
//
// Mutants (each must be rejected by the safety check):
//   PRUNE_EARLY             prune/live_holders treat a lease in its last tick as gone (an expiry
//                           compared one unit early, e.g. seconds rounded, or `<=` for `<`).
//   RESIZE_IGNORES_HOLDERS  resize's fill() starts from 0 held (grants `permits` more).
//   EXTEND_EXPIRED          extend.lua without `tonumber(score) < now_ms`: a lease that ran out (and
//                           was not pruned yet) comes back to life after its permit went to another.
//   NO_RENEW_OURS           acquire.lua's "ours already" branch without the renewal (finding F1).
//   NO_FENCE_FLOOR          chain.py/steps.py accept a popped "<fence> <token>" of ours whatever
//                           its fence (no floor check: finding F2).
//   FIRST_FROM_POP          a waiter told 'first' counts the lease of what it pops next from then,
//                           not from its last look (its floor is that look's: a hand-off made to
//                           it while it was paused is above it, and may have run out).
// Mutants the liveness check must reject:
//   NO_RECHECK              a waiter trusts its wake-up alone (BLPOP without a timeout, no look
//                           again): a holder that crashes pushes no hand-off, nor does a lease that
//                           ends, and the waiter waits forever.
//
// Bounding the `first` list (the real one only ends by its key TTL): a hand-off not above its
// token's floor is, with the floor check, a value nobody takes: popping it costs a re-check, which
// the "skip" branch does anyway. So the model may forget such entries: it keeps the oldest one
// (a re-check that queues forgets the others) and drops one when fill() finds the list full (at
// most one entry per token is above its floor: a token is handed a permit once per look).
//
// FINDINGS, both fixed in the scripts at the hashes above (this model passes its safety check;
// the mutants NO_RENEW_OURS and NO_FENCE_FLOOR bring each back):
//   F1 acquire.lua's "ours already" branch returns the grant without renewing the lease, while
//      steps.py counts the lease from `sent` of that look: a waiter handed a permit that it finds by
//      re-checking (not by its BLPOP) believes it holds until sent + ttl, but the server's lease ends
//      at hand-off + ttl, earlier; in between the permit is granted again (more holders than permits,
//      as the holders see it). locks/acquire.lua renews in that branch (`if pttl < ttl`).
//   F2 a hand-off left on the shared `first` list outlives the lease it announces: a waiter paused
//      past its TTL re-checks (the lease is gone, it queues again, first in line), then pops its own
//      stale "<fence> <token>" and believes it holds a permit the server no longer counts.
//   Fixes: F1 the "ours" branch renews the lease to now + ttl; F2 a not-granted reply carries the
//   floor (above) and chain.py ignores an own hand-off whose fence is not above it (not fix (a),
//   acquire removing the caller's entries from `first`: no scan).
//
// Not modelled: Redis restarts (locks/hold.pml does them), fencing token values (same hybrid clock
// as locks, checked there; here only "above the floor or not"), the admin index and key TTLs, a
// client's own limit differing from another's (all pass permits=2).

#define N      3      /* clients, one acquire each: tokens 1..3 */
#define TTL    2
#define PLACE  2
#define LIMIT  2

/* Redis */
bool zin[N + 1];      /* token in the holders zset (and h:<token> in the state hash) */
byte hleft[N + 1];    /* ticks until its score (expiry) passes */
byte limit = LIMIT;
byte qtok[N]; byte qleft[N]; byte qlen;
byte ftok[N]; byte flen;   /* the `first` list: hand-offs "<fence> <token>", oldest first */
bool ffr[N];          /* that hand-off's fence is above the floor of its token's last look */
/* ghosts */
byte hi;              /* live leases when the limit was last lowered */
bool resized;
bool revoked_once;
byte crashes;

bool rv[N + 1];       /* token's lease revoked since its last grant (its holder is not told) */

bool held[N]; byte valid[N]; byte look[N];
bool waiting0;        /* client 0 is in its waiting loop (for waiter_holds) */
byte due0;            /* ticks until client 0's next look is due (LIVENESS, see Clock) */
#define RECHECK 1

#ifdef NO_RECHECK
#define TRUST_WAKEUP 1
#else
#define TRUST_WAKEUP 0
#endif
#ifdef LIVENESS
#define PROMPT0 1     /* client 0 neither gives up nor crashes while it waits */
#else
#define PROMPT0 0
#endif

#define LIVE(t) (zin[t] && hleft[t] > 0)
#ifdef PRUNE_EARLY
#define MARGIN 1
#else
#define MARGIN 0
#endif

/* prune(): drop the leases whose score < now (the first thing each script but extend does), at
   most 64 a call: here at most one (the lowest token), so that expired leases left unpruned are
   in the model */
inline prune() {
  k = 1;
  do
  :: k <= N && zin[k] && hleft[k] <= MARGIN -> zin[k] = false; break
  :: k <= N && !(zin[k] && hleft[k] <= MARGIN) -> k++
  :: else -> break
  od
}

inline count_live(n) {
  n = 0; k = 1;
  do
  :: k <= N -> if :: LIVE(k) -> n++ :: else -> skip fi; k++
  :: else -> break
  od
}

inline shift_from(at) {
  k = at;
  do
  :: k + 1 < qlen -> qtok[k] = qtok[k + 1]; qleft[k] = qleft[k + 1]; k++
  :: else -> break
  od;
  qlen--; qtok[qlen] = 0; qleft[qlen] = 0
}

inline grant(tok) {
  zin[tok] = true; hleft[tok] = TTL; rv[tok] = false;
  count_live(n);
  assert(n <= limit)              /* (1) */
}

inline drop_at(at) {
  x = at;
  do :: x + 1 < flen -> ftok[x] = ftok[x + 1]; ffr[x] = ffr[x + 1]; x++ :: else -> break od;
  flen--; ftok[flen] = 0; ffr[flen] = false; x = 0
}

/* Only to bound the list (see the header): forget the oldest hand-off that is not above its
   token's floor. One exists when the list is full: at most one per token is above it. */
inline drop_stale() {
  k = 0;
  do :: k < flen && ffr[k] -> k++ :: else -> break od;
  assert(k < flen);
  drop_at(k); k = 0
}

/* Only to bound the states (see the header): keep the oldest stale hand-off, forget the others. */
inline one_stale() {
  k = 0;
  do :: k < flen && ffr[k] -> k++ :: else -> break od;
  if
  :: k < flen ->
     k++;
     do
     :: k < flen && ffr[k] -> k++
     :: k < flen && !ffr[k] -> drop_at(k)
     :: k >= flen -> break
     od
  :: else -> skip
  fi;
  k = 0
}

/* fill(): free permits to the oldest live waiters; mine = the caller's token if it was popped */
inline fill(caller) {
  mine = 0;
  count_live(held_n);
#ifdef RESIZE_IGNORES_HOLDERS
  if :: resizing -> held_n = 0 :: else -> skip fi;
#endif
  do
  :: held_n < limit ->
     do
     :: qlen > 0 && qleft[0] == 0 -> shift_from(0)
     :: else -> break
     od;
     if
     :: qlen == 0 -> break
     :: else ->
        e = qtok[0]; shift_from(0);
        grant(e);
        if
        :: e == caller -> mine = e
        :: else ->
           if :: flen == N -> drop_stale() :: else -> skip fi;
           ftok[flen] = e; ffr[flen] = true; flen++
        fi;
        held_n++
     fi
  :: else -> break
  od
}

/* BLPOP first: the oldest hand-off */
inline pop_first() {
  k = 0;
  do :: k + 1 < flen -> ftok[k] = ftok[k + 1]; ffr[k] = ffr[k + 1]; k++ :: else -> break od;
  flen--; ftok[flen] = 0; ffr[flen] = false; k = 0
}

#ifdef NO_FENCE_FLOOR
#define NO_FLOOR 1
#else
#define NO_FLOOR 0
#endif

inline remove_place(t) {
  k = 0;
  do
  :: k < qlen && qtok[k] != t -> k++
  :: k < qlen && qtok[k] == t -> shift_from(k); break
  :: k >= qlen -> break
  od
}

inline acquire(t, m) {
  got = false;
  prune();
  if :: zin[t] && !LIVE(t) -> zin[t] = false :: else -> skip fi;   /* ours ran out, unpruned */
  if
  :: LIVE(t) -> got = true;                        /* ours already: renewed to now + ttl */
#ifndef NO_RENEW_OURS
     hleft[t] = TTL;
#endif
     k = 0;                                        /* forget_hand_off: LREM our hand-off, */
     do                                            /* the one made after our last look */
     :: k < flen && !(ftok[k] == t && ffr[k]) -> k++
     :: k < flen && ftok[k] == t && ffr[k] -> drop_at(k); break
     :: k >= flen -> break
     od;
     k = 0
  :: !LIVE(t) && m == CANCEL -> remove_place(t)
  :: !LIVE(t) && m != CANCEL ->
     fill(t);
     if
     :: mine == t -> got = true
     :: mine != t && held_n < limit ->             /* a permit is free, nobody live waits */
        grant(t); got = true;
        if :: m == WAIT -> remove_place(t) :: else -> skip fi
     :: else ->                                    /* place_waiter + waiter_ahead */
        k = 0;
        do
        :: k < qlen && qtok[k] != t -> k++
        :: else -> break
        od;
        if
        :: m == WAIT && k < qlen -> qleft[k] = PLACE
        :: else -> assert(qlen < N); qtok[qlen] = t; qleft[qlen] = PLACE; qlen++
        fi;
        ahead = 0; k = 0;
        do
        :: k < qlen && qtok[k] == t -> break
        :: k < qlen && qtok[k] != t -> if :: qleft[k] > 0 -> ahead = qtok[k] :: else -> skip fi; k++
        :: k >= qlen -> ahead = 0; break
        od;
        if                                         /* pending_ahead: first in line, behind */
        :: ahead == 0 ->                           /* the owner of the newest hand-off still */
           do                                      /* on `first` while it holds (the others */
           :: flen > 0 && LIVE(ftok[flen - 1]) -> ahead = ftok[flen - 1]; break   /* dropped) */
           :: flen > 0 && !LIVE(ftok[flen - 1]) -> flen--; ftok[flen] = 0; ffr[flen] = false
           :: flen == 0 -> break
           od
        :: else -> skip
        fi;
        k = 0;                                     /* floor: every hand-off for t made so far */
        do                                         /* has a fence not above it */
        :: k < flen -> if :: ftok[k] == t -> ffr[k] = false :: else -> skip fi; k++
        :: else -> break
        od;
        one_stale()
     fi
  fi
}

inline release(t) {
  prune();
  if
  :: LIVE(t) ->
     zin[t] = false; hleft[t] = 0;
     fill(0)
  :: else -> skip                                  /* 0: not ours */
  fi
}

mtype = { QUEUE, WAIT, CANCEL };

proctype Client(byte i) {
  byte t = i + 1;
  byte k, n, e, mine, held_n, ahead, ext, gu, x;
  bool got, resizing;
  mtype mode = QUEUE;
  if :: i == 0 -> waiting0 = true :: else -> skip fi;
send:
  look[i] = TTL;
  atomic { acquire(t, mode); k = 0; n = 0; e = 0; mine = 0; held_n = 0; if :: PROMPT0 && i == 0 -> due0 = RECHECK :: else -> skip fi };
  if
  :: got -> goto granted
  :: !got && mode == CANCEL -> atomic { look[i] = 0; ahead = 0 }; goto done
  :: else ->
     mode = WAIT;
block:
     if
     :: atomic { ahead != 0 ->                      /* 'first' on the wake list of the waiter */
          ahead = 0;                                /* ahead (it popped its hand-off): block on */
#ifdef FIRST_FROM_POP
          look[i] = TTL;                            /* `first` without a look (mutant: the lease */
#endif
          skip }                                    /* counted from then, not from the look) */
        goto block
     :: atomic { ahead == 0 && flen > 0 && ftok[0] == t && (ffr[0] || NO_FLOOR) ->
          pop_first() }                             /* our hand-off, above the floor */
        goto granted
     :: atomic { ahead == 0 && flen > 0 && ftok[0] == t && !ffr[0] && !NO_FLOOR ->
          pop_first() }                             /* ours, not above the floor: stale, re-check */
        goto send
     :: atomic { ahead == 0 && flen > 0 && ftok[0] == t && ffr[0] ->
          pop_first() }                             /* ours, fresh, yet ignored (server clock */
        goto send                                   /* stepped back): re-check */
     :: atomic { ahead == 0 && flen > 0 && ftok[0] != t ->   /* another's: consumed, re-check */
          pop_first() }
        goto send
     :: !TRUST_WAKEUP -> goto send                  /* 'moved', timed out: re-check */
     :: i == 2 && gu < 1 -> gu++; mode = CANCEL; goto send
     :: atomic { crashes < 1 && !(PROMPT0 && i == 0) -> crashes++ }; goto done
     fi
  fi;
granted:
  atomic { held[i] = true; valid[i] = look[i]; look[i] = 0; ahead = 0; if :: i == 0 -> waiting0 = false :: else -> skip fi };
  do
  :: ext < 1 -> ext++;
#ifdef EXTEND_EXPIRED
     atomic { if :: zin[t] -> hleft[t] = TTL; valid[i] = TTL :: else -> skip fi }
#else
     atomic { if :: LIVE(t) -> hleft[t] = TTL; valid[i] = TTL :: else -> skip fi }
#endif
  :: atomic { held[i] = false; valid[i] = 0; release(t); k = 0; n = 0; e = 0; mine = 0; held_n = 0 }; break
  :: atomic { crashes < 1 -> crashes++; held[i] = false; valid[i] = 0 }; break
  od;
done:
  skip
}

active proctype Operator() {
  byte k, n, e, mine, held_n, x;
  bool resizing;
end:
  do
  :: atomic { !revoked_once && (LIVE(1) || LIVE(2) || LIVE(3)) ->   /* revoke.lua on one live lease */
       prune();
       if
       :: LIVE(1) -> x = 1
       :: LIVE(2) -> x = 2
       :: LIVE(3) -> x = 3
       fi;
       revoked_once = true;
       zin[x] = false; hleft[x] = 0; rv[x] = true;
       fill(0); k = 0; n = 0; e = 0; mine = 0; held_n = 0; x = 0 }
  :: atomic { !resized ->                           /* resize.lua */
       resized = true; prune();
       if :: x = 1 :: x = 3 fi;
       count_live(n);
       if :: x < limit && n > x -> hi = n :: else -> skip fi;
       limit = x;
       resizing = true; fill(0); resizing = false;
       k = 0; n = 0; e = 0; mine = 0; held_n = 0; x = 0 }
  od
}

active proctype Clock() {
  byte k;
end:
  do
  :: atomic { !(PROMPT0 && waiting0 && due0 == 0) ->   /* LIVENESS: client 0 is never late for a look */
       if :: PROMPT0 && due0 > 0 && waiting0 -> due0-- :: else -> due0 = 0 fi;
       k = 1;
       do
       :: k <= N -> if :: hleft[k] > 0 -> hleft[k]-- :: else -> skip fi; k++
       :: else -> break
       od;
       k = 0;
       do
       :: k < N ->
          if :: qleft[k] > 0 -> qleft[k]-- :: else -> skip fi;
          if :: valid[k] > 0 -> valid[k]-- :: else -> skip fi;
          if :: look[k] > 0 -> look[k]-- :: else -> skip fi;
          k++
       :: else -> break
       od;
       k = 0
     }
  od
}

#define VIEW(i) (held[i] && valid[i] > 0 && !rv[i + 1])
#define NVIEW   (VIEW(0) + VIEW(1) + VIEW(2))

active proctype Monitor() {
end:
  atomic {
    ((VIEW(0) && !(zin[1] && hleft[1] > 0)) || (VIEW(1) && !(zin[2] && hleft[2] > 0))
     || (VIEW(2) && !(zin[3] && hleft[3] > 0))                          /* (2) */
     || NVIEW > (limit > hi -> limit : hi))                             /* (3) */
    -> assert(false)
  }
}

ltl waiter_holds { [] (waiting0 -> <> held[0]) }

init {
  atomic { run Client(0); run Client(1); run Client(2) }
}
