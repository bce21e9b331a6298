//! models: locks/acquire.lua sha256=f320db0c767e7a13
//! models: locks/release.lua sha256=1f7c5ba29392e21a
//! models: locks/extend.lua sha256=870a8e81acced229
//! models: locks/common.lua sha256=56171091f7e3be87
//! models: common/waiters.lua sha256=b0138315490d0cf1
//! models: common/time.lua sha256=65235869e5285e2d
//! check: safety
//! check: ltl waiter_holds
//! mutant: RELEASE_ANY_TOKEN expect: safety
//! mutant: LEASE_FROM_POP expect: safety
//! mutant: NO_CLOCK_FLOOR expect: safety
//! mutant: NO_RECHECK expect: waiter_holds
//! mutant: NO_CHAIN_BOUND expect: safety
//! mutant: SKIP_WITHOUT_RECORD expect: safety
//! spin: -DNFAIR=3
//
// The HOLD protocol of a lock (core/holds/steps.py driving locks/*.lua): FIFO queue, hand-off
// through wake lists, release, extend, lease expiry, a waiter giving up, a crash, one Redis
// restart (keeping its data, or losing it), and the fencing token's hybrid clock. Two clients, two
// acquires each (a fresh owner token per acquire, as Hold does).
//
// Which action stands for what:
//   Client "send"           steps.py _acquire_steps: `sent = time.monotonic()` (look[i] = TTL: the
//                           lease the grant would give, counted from here) ...
//   acquire()               ... and the script locks/acquire.lua, modes queue / wait / cancel,
//                           run atomically when it reaches the server (any ticks later):
//                           "ours already" (rec[1] == token), "free" (hand_off to the oldest live
//                           waiter, else write_grant to the caller), "held": place_waiter +
//                           waiter_ahead (common/waiters.lua), or leave_lock_queue for 'cancel'.
//                           (common/waiters.lua's pending_ahead and forget_hand_off, the `first`
//                           list's, are called by the semaphore and read-write lock scripts only.)
//   BLPOP branch            steps.py: Blpop on the wake list of `ahead` (locks/lock.py
//                           _wait_keys), _popped_fence (the token must be ours), _grant_steps
//                           with `sent` of the last look, or, when that would leave less than
//                           half the TTL (_lease_left_enough), a look again ('wait' mode finds
//                           the grant ours and renews it).  The "skip" branch is a BLPOP that timed
//                           out, was woken by 'moved' or lost its server: re-check in 'wait' mode.
//   give up                 the wait ran out or Hold._interrupt: a 'cancel' look; if it finds the
//                           lock granted, the grant is kept (deadline) or given back at once
//                           (interrupted: _acquire_steps' `yield self._release_call`).
//   extend()                locks/extend.lua with the send merged into the script (valid = TTL).
//   release()               locks/release.lua: compare the token, release_grant -> hand_off (pops
//                           the oldest live waiter, write_grant, pushes "<fence> <token>" onto the
//                           releaser's own wake list) or a tombstone {false, fence, queue bound}
//                           (FENCE_KEEP). Both read the queue only when the record does not say
//                           that no live place can be in it (queue_may_live: `rqu` below).
//                           A hand-off to a waiter of the releaser's own process (its queue entry
//                           names the releaser's process id) is not pushed: the script returns the
//                           element and the releaser hands it to that waiter in-process
//                           (transport/nearby.py). Here it is the same channel, wtok[wake]: only
//                           the waiter blocked on that list takes it, with the same checks. Lost
//                           with the release's reply, it is the "skip" branch (the waiter looks
//                           again when its wait ends); kept in-process across a restart that loses
//                           the data, it is a pop just before that restart, which the model has.
//                           The releaser's other endings ('moved' in-process) are "skip" too.
//   crash                   a client dies (SIGKILL): its grant or its place just lapses.
//   Clock                   one tick of time: every TTL counts down (Redis expiry, a waiter's
//                           place deadline, a holder's own lease); the server clock (µs) moves past
//                           every fencing token issued before (see `floor`). Client 0 is a prompt
//                           waiter: time does not pass while its next look is overdue (its BLPOP
//                           ends within min(chunk, pttl + 2 ms), steps.py: a look at least once a
//                           tick); client 1 may pause anywhere for any time (SIGSTOP, GC).
//                           (The bound holds because the acquire script never reports a live
//                           grant as 0 ms left: PTTL's 0 for a grant in its last millisecond
//                           is reported as 1.)
//   Server                  one restart: keep the data (fsync always) or lose it all (no
//                           persistence); the server answers again from the next tick (a restart
//                           takes longer than a microsecond).
//
// Time is abstract: ticks; TTL, the waiter's place and the tombstone are a few ticks.  The holder's
// clock and the server's run at the same rate (no drift), and the server's clock never steps back.
// The fence is max(last + 1, now_us) (write_grant / next_monotonic).  `floor` stands for now_us:
// above every fence issued in an earlier tick (the real clock gains 1 per µs, grants are rarer).
//
// Properties
//   safety (Monitor + asserts): (1) never two clients that believe they hold within their own lease
//     (held[i] && valid[i] > 0) with grants written in the same data epoch (a restart that loses
//     data starts a new epoch: there the fencing token is the guard, as the README says);
//     (2) every grant's fencing token is above every token issued before, across a restart that
//     lost the record and across its expiry (a crashed holder: the key, fence included, is gone).
//     Tokens are kept by their order alone (the Clock shifts them down), so runs are finite.
//     (3) FIFO: a lock that is free is never granted to a caller, and never left free by a
//     release, while another client's place in the queue is live (the queue bound in the record,
//     queue_until_ms, lets both skip reading the queue: it must bound every live place).
//   ltl waiter_holds: under weak fairness client 0, which waits, never gives up and looks again
//     at least once a tick (client 1 may pause, give up and crash while it waits), ends up holding the lock whatever the holders do (release,
//     extend a bounded number of times, crash) and whatever Redis does (one restart).
//
// Mutants (each must be rejected):
//   RELEASE_ANY_TOKEN  release.lua without `rec[1] ~= token` (deletes whoever holds it now).
//   LEASE_FROM_POP     the hand-off's lease counted from the BLPOP's return instead of from the
//                      start of the last look (the bug found in the last round: a waiter paused
//                      between the hand-off and the pop believes it holds after its grant expired).
//   NO_CLOCK_FLOOR     fence = last + 1 without max(.., now_us): after an expiry or a restart that
//                      lost the record, tokens restart from 1.
//   NO_RECHECK         a waiter trusts its wake-up alone (BLPOP without a timeout, no re-check): a
//                      holder that crashes never pushes a hand-off, and the waiter waits forever.
//   NO_CHAIN_BOUND     a grant written where there was no record (an expired grant: its bound went
//                      with it) carries no queue bound although places are left in the queue.
//   SKIP_WITHOUT_RECORD  no record read as "no queue" (queue_may_live false) instead of "unknown".
//
// Not modelled: reentrant nesting, read-write locks, replicas=n (WAIT), force_release, the admin
// index and wait statistics (no effect on who holds), clock drift or a server clock stepping back,
// a restart that loads an older snapshot (RDB), the client's own check that a fence never goes
// back (_grant_steps), Redis Cluster. The fence each client receives is not kept (only the ones
// the server issues are checked).

#define N      2      /* clients */
#define A      2      /* acquire attempts per client */
#define TTL    2      /* lock ttl, ticks */
#define PLACE  2      /* a waiter's place in the queue lives this long without a re-check */
#define TOMB   3      /* FENCE_KEEP_MS: a released lock's tombstone */
#define NTOK   5      /* owner tokens 1..N*A (a fresh one per attempt: secrets.token_urlsafe) */
#define RECHECK 1     /* client 0 looks again within this many ticks while it waits */

mtype = { QUEUE, WAIT, CANCEL };

/* Redis: the lock record (KEYS[1]) */
byte rtok;            /* holder's token; 0: free (tombstone or no key) */
byte rfence;          /* its fence (record or tombstone); 0: no key */
byte rleft;           /* ticks until the key expires; 0: no key */
byte rep;             /* data epoch of the grant */
byte rqu;             /* queue_until_ms: ticks until the bound on the queue's live places passes */
/* the queue (KEYS[2]), oldest first */
byte qtok[N]; byte qleft[N]; byte qlen;
/* wake lists, one per owner token: the hand-off its release pushed ("<fence> <token>"; the
   fence itself is not kept: the properties are about the tokens the server issues) */
byte wtok[NTOK]; byte wep[NTOK];
bool up = true;
byte epoch;           /* data epochs: a restart that loses or rewinds data starts a new one */
byte maxfence;        /* the highest fencing token ever issued (ghost) */
byte floor = 1;       /* the server clock in µs: above every token issued in an earlier tick */
byte crashes;

/* clients, as they see themselves */
bool held[N];         /* believes it holds */
byte valid[N];        /* its own lease left (Hold._valid_until - now), ticks */
byte gep[N];          /* the data epoch its grant was written in */
byte look[N];         /* TTL - ticks since the start of its last look (`sent`) */
bool waiting[N];      /* in the waiting loop (for waiter_holds) */
byte due0;            /* ticks until client 0's next look is due (see Clock) */

inline shift_from(at) {
  k = at;
  do
  :: k + 1 < qlen -> qtok[k] = qtok[k + 1]; qleft[k] = qleft[k + 1]; k++
  :: else -> break
  od;
  qlen--; qtok[qlen] = 0; qleft[qlen] = 0
}

/* write_grant: fence = max(last + 1, now_us); a record written where there was none bounds the
   places left in the queue (PEXPIRE queue 2 x QUEUE_KEEP_MS: 1 when the queue is there) */
inline write_grant(tok) {
#ifndef NO_CHAIN_BOUND
  if
  :: rleft == 0 && qlen > 0 -> rqu = 2 * PLACE
  :: rleft == 0 && qlen == 0 -> rqu = 0
  :: else -> skip
  fi;
#endif
#ifdef NO_CLOCK_FLOOR
  f = rfence + 1;
#else
  f = (rfence + 1 > floor -> rfence + 1 : floor);
#endif
  assert(f > maxfence);          /* fencing tokens only grow */
  maxfence = f;
  rtok = tok; rfence = f; rleft = TTL; rep = epoch
}

/* queue_may_live: without a record nothing is known; with one, its bound says */
#ifdef SKIP_WITHOUT_RECORD
#define QUEUE_MAY_LIVE (rqu > 0)
#else
#define QUEUE_MAY_LIVE (rleft == 0 || rqu > 0)
#endif

/* hand_off: pop the oldest live waiter (first_live_waiter drops the dead ones before it), grant
   it; push "<fence> <token>" onto `wake` (the releaser's own list) unless it is the caller. */
inline hand_off(caller, wake) {
  e = 0;
  if
  :: QUEUE_MAY_LIVE ->
     do
     :: qlen > 0 && qleft[0] == 0 -> shift_from(0)
     :: else -> break
     od;
     if
     :: qlen > 0 ->
        e = qtok[0]; shift_from(0);
        write_grant(e);
        if
        :: wake != 0 && e != caller -> wtok[wake] = e; wep[wake] = epoch
        :: else -> skip
        fi
     :: else -> skip
     fi
  :: else -> skip                                 /* the record says no live place is queued */
  fi
}

/* FIFO: no place of another client is live (asserted where a free lock goes to the caller, or
   stays free) */
inline no_live_place(t) {
  k = 0;
  do
  :: k < qlen -> assert(qleft[k] == 0 || qtok[k] == t); k++
  :: else -> break
  od;
  k = 0
}

/* locks/acquire.lua for token t in mode m; sets got, gf (fence), ge (epoch), ahead */
inline acquire(t, m) {
  got = false;
  if
  :: rtok == t ->                                   /* ours already */
     rleft = TTL; got = true; ge = rep
  :: rtok == 0 ->                                   /* free: waiters first */
     hand_off(t, 0);
     if
     :: e == t -> got = true; ge = rep
     :: e == 0 -> no_live_place(t); write_grant(t); got = true; ge = rep
     :: else -> skip                                /* handed to the head: held now */
     fi
  :: else -> skip
  fi;
  if
  :: got -> skip
  :: !got && m == CANCEL ->                         /* leave_lock_queue */
     k = 0;
     do
     :: k < qlen && qtok[k] != t -> k++
     :: k < qlen && qtok[k] == t -> shift_from(k); break
     :: k >= qlen -> break
     od
  :: !got && m != CANCEL ->                         /* place_waiter */
     k = 0;
     do
     :: k < qlen && qtok[k] != t -> k++
     :: else -> break
     od;
     if
     :: m == WAIT && k < qlen -> qleft[k] = PLACE   /* renewed in place */
     :: else -> assert(qlen < N); qtok[qlen] = t; qleft[qlen] = PLACE; qlen++
     fi;
     if :: rqu < PLACE -> rqu = 2 * PLACE :: else -> skip fi;   /* the record's queue bound */
     /* waiter_ahead: the live waiter just ahead of us, else the holder */
     ahead = rtok; k = 0;
     do
     :: k < qlen && qtok[k] == t -> break
     :: k < qlen && qtok[k] != t -> if :: qleft[k] > 0 -> ahead = qtok[k] :: else -> skip fi; k++
     :: k >= qlen -> ahead = rtok; break
     od
  fi
}

/* locks/release.lua for token t (its own wake list is list t) */
inline release(t) {
#ifdef RELEASE_ANY_TOKEN
  if
  :: rtok != 0 ->
#else
  if
  :: rtok == t ->
#endif
#ifdef NO_HANDOFF
     e = 0;
#else
     hand_off(0, t);
#endif
     if
     :: e == 0 -> no_live_place(t); rtok = 0; rleft = TOMB   /* tombstone {false, fence, bound} */
     :: else -> skip
     fi
  :: else -> skip                                 /* 0: not ours */
  fi
}

proctype Client(byte i) {
  byte a, t, k, e, f, ge, ahead, ext, gu;
  bool got;
  mtype mode;
  do
  :: a < A ->
     t = i * A + a + 1; a++; mode = QUEUE; gu = 0;
     waiting[i] = true;
send:
     look[i] = TTL;                                 /* sent = time.monotonic() */
     atomic { up -> acquire(t, mode); k = 0; e = 0; f = 0; if :: i == 0 -> due0 = RECHECK :: else -> skip fi };
     if
     :: got && mode == CANCEL -> goto granted         /* the wait ran out, granted meanwhile: kept */
     :: got && mode == CANCEL ->                      /* interrupted: given back at once */
        atomic { if :: up -> release(t) :: else -> skip fi; waiting[i] = false; look[i] = 0; k = 0; e = 0; f = 0; ahead = 0 };
        goto next
     :: got && mode != CANCEL -> goto granted
     :: atomic { !got && mode == CANCEL -> waiting[i] = false; look[i] = 0; ahead = 0 }; goto next
     :: !got && mode != CANCEL ->
        mode = WAIT;
        if
        :: atomic { wtok[ahead] == t ->               /* BLPOP: our hand-off */
             ge = wep[ahead]; wtok[ahead] = 0;
#ifdef LEASE_FROM_POP
             look[i] = TTL;
#endif
           }
           goto granted
        :: atomic { wtok[ahead] == t -> wtok[ahead] = 0 }   /* ours, popped long after our look */
           goto send                                   /* (_lease_left_enough): look again */
#ifndef NO_RECHECK
        :: skip -> goto send                           /* timed out, 'moved', outage: re-check */
#endif
        :: i != 0 && gu < 1 -> gu++; mode = CANCEL; goto send
        :: atomic { i != 0 && crashes < 1 -> crashes++; waiting[i] = false }; goto dead
        fi
     fi;
granted:
     atomic { held[i] = true; valid[i] = look[i]; gep[i] = ge; waiting[i] = false; look[i] = 0; ge = 0; ahead = 0 };
     ext = 0;
     do
     :: ext < 1 -> ext++;                             /* extend.lua */
        atomic { if :: up && rtok == t -> rleft = TTL; valid[i] = TTL :: else -> skip fi }
     :: atomic { held[i] = false; valid[i] = 0;       /* release.lua */
                 if :: up -> release(t) :: else -> skip fi; k = 0; e = 0; f = 0 }; break
     :: atomic { crashes < 1 -> crashes++; held[i] = false; valid[i] = 0 }; goto dead
     od;
next:
     atomic { got = false; ext = 0; gu = 0 }
  :: a >= A -> break
  od;
dead:
  skip
}

active proctype Clock() {
  byte k;
end:
  do
  :: atomic { !(waiting[0] && due0 == 0 && up) ->   /* client 0 is never late for a look */
       if :: due0 > 0 && waiting[0] -> due0-- :: else -> due0 = 0 fi;
       /* Fencing tokens are kept by their order alone (all the scripts do is +1, max and compare;
          the record holds either the last token issued or none): shifted down at every tick. */
       if
       :: maxfence > 1 -> if :: rfence > 0 -> rfence = rfence - maxfence + 1 :: else -> skip fi; maxfence = 1
       :: else -> skip
       fi;
       floor = maxfence + 1;
       up = true;
       if
       :: rleft > 0 -> rleft--; if :: rleft == 0 -> rtok = 0; rfence = 0; rep = 0; rqu = 0 :: else -> skip fi
       :: else -> skip
       fi;
       if :: rqu > 0 -> rqu-- :: else -> skip fi;
       k = 0;
       do
       :: k < N ->
          if :: qleft[k] > 0 -> qleft[k]-- :: else -> skip fi;
          if :: valid[k] > 0 -> valid[k]-- :: else -> skip fi;
          if :: look[k] > 0 -> look[k]-- :: else -> skip fi;
          k++
       :: else -> break
       od
     }
  od
}

active proctype Server() {
  byte k;
  if
  :: atomic { up = false }                          /* restart, data kept (AOF fsync always) */
  :: atomic { up = false; epoch++;                  /* restart without persistence: all lost */
       rtok = 0; rfence = 0; rleft = 0; rep = 0; rqu = 0; qlen = 0;
       k = 0; do :: k < N -> qtok[k] = 0; qleft[k] = 0; k++ :: else -> break od;
       k = 0; do :: k < NTOK -> wtok[k] = 0; wep[k] = 0; k++ :: else -> break od }
  :: skip
  fi
}

/* never two clients that believe they hold within their lease, on grants of the same data epoch */
active proctype Monitor() {
end:
  atomic { (held[0] && valid[0] > 0 && held[1] && valid[1] > 0 && gep[0] == gep[1]) -> assert(false) }
}

init {
  atomic { run Client(0); run Client(1) }
}

ltl waiter_holds { [] (waiting[0] -> <> held[0]) }
