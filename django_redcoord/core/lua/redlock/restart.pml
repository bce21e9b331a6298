//! models: redlock/guard.lua sha256=3389f06e27c96f83
//! models: locks/acquire.lua sha256=f320db0c767e7a13
//! models: locks/release.lua sha256=1f7c5ba29392e21a
//! check: safety
//! check: ltl ends
//! mutant: NO_GUARD expect: safety
//! mutant: NO_VALIDITY expect: safety
//! mutant: WAIT_FOR_ALL expect: ends
//
// REDLOCK with a master that restarts empty (core/redlock/redlock.py Redlock._acquire_steps on three
// masters; on each, redlock/guard.lua in front of locks/acquire.lua in 'try' mode; give-backs and
// releases are locks/release.lua). Two clients, one attempt each, quorum 2 of 3, one restart.
//
// Which action stands for what:
//   Client "start"    redlock.py: `started = time.monotonic()`, a fresh owner token (valid[c] counts
//                     the validity ttl - elapsed from here; the model has no clock drift, so the
//                     drift allowance is 0).
//   ask(m)            the acquire script on master m when the request reaches it: guard.lua (refuse
//                     while the master may have forgotten grants: refuse[m] > 0), then acquire.lua
//                     'try' (grant if the lock is free or expired). A master that is down does not
//                     answer. The masters are asked in any order; the client decides on the first
//                     majority (a request it no longer waits for is dropped: a late grant to a
//                     given-back owner only keeps the lock busy).
//   decide            granted by >= 2 and validity > 0: held (valid[c] as counted from "start");
//                     else give back on every master (release.lua, token compared).
//   release           release.lua on every master. (Redlock passes no process id to acquire.lua
//                     and release.lua: nothing is handed in-process, and a master has no waiters.)
//   Master restart    one master restarts empty (no persistence): its records and its boot key are
//                     gone; it answers again from the next tick. With guard.lua, finding no boot key
//                     it refuses until its start + max TTL (refuse[m] = TTL ticks). A loss without
//                     a restart (a flush, SWAPDB, a full resync from another server) is this same
//                     step: guard.lua refuses for max TTL from the loss.
//   Clock             a tick: records, refusals and the clients' validities count down.
//
// Property (safety): never two clients that believe they hold the lock within their validity.
//
// Mutants (each must be rejected):
//   NO_GUARD      acquire.lua without guard.lua: the restarted master and the one that was not asked
//                 form a second majority while the first holder's validity lasts.
//   NO_VALIDITY   a majority counts even when its validity ran out (elapsed > ttl): the holder's
//                 lease is counted from the last answer instead of from `started`.
//
// Not modelled: clock drift (the drift allowance is 0 here), raise_fence (fencing tokens: hold.pml
// checks the hybrid clock), trust.lua (a master vouched for as never forgetting is not restarted
// empty here), extend, masters that hang without restarting (a master that does not answer).

#define M     3
#define C     2
#define A     1
#define TTL   2
#define Q     2
#define NTOK  3       /* owner tokens 1..C*A */

byte rtok[M];         /* the lock record on each master: owner token, 0 free */
byte rleft[M];        /* ticks until it expires */
byte refuse[M];       /* guard.lua: ticks it still refuses after a restart */
bool up[M];
bool restarted;

bool held[C];
bool finished[C];     /* the client's attempts all ended (liveness: none hangs) */
byte valid[C];

active proctype Clock() {
  byte k;
end:
  do
  :: atomic {
       k = 0;
       do
       :: k < M ->
          up[k] = true;
          if :: rleft[k] > 0 -> rleft[k]--; if :: rleft[k] == 0 -> rtok[k] = 0 :: else -> skip fi :: else -> skip fi;
          if :: refuse[k] > 0 -> refuse[k]-- :: else -> skip fi;
          k++
       :: else -> break
       od;
       k = 0;
       do
       :: k < C -> if :: valid[k] > 0 -> valid[k]-- :: else -> skip fi; k++
       :: else -> break
       od;
       k = 0
     }
  od
}

active proctype Restart() {
  byte m;
  if
  :: m = 0 :: m = 1 :: m = 2
  fi;
  atomic {
    up[m] = false; rtok[m] = 0; rleft[m] = 0;   /* restarted empty: records and boot key gone */
#ifndef NO_GUARD
    refuse[m] = TTL                              /* guard.lua: lost = start, refuse for max TTL */
#endif
  };
  m = 0
}

proctype Client(byte c) {
  byte a, t, m, granted, answered, k;
  bool asked[M];
  do
  :: a < A ->
     t = c * A + a + 1; a++;
     atomic { valid[c] = TTL; granted = 0; answered = 0 };     /* started */
     do
     :: granted >= Q -> break
#ifndef WAIT_FOR_ALL
     :: granted + (M - answered) < Q -> break   /* a majority can no longer be reached: give up now */
#endif
     :: else ->
        if
        :: !asked[0] -> m = 0
        :: !asked[1] -> m = 1
        :: !asked[2] -> m = 2
        fi;
        atomic {
          asked[m] = true; answered++;
          if
          :: up[m] && refuse[m] == 0 && (rtok[m] == 0 || rtok[m] == t) ->
             rtok[m] = t; rleft[m] = TTL; granted++
          :: else -> skip                        /* refused, busy, or down (no answer) */
          fi;
          m = 0
        }
     od;
#ifdef NO_VALIDITY
     if :: granted >= Q -> valid[c] = TTL :: else -> skip fi;
#endif
     if
     :: atomic { granted >= Q && valid[c] > 0 -> held[c] = true };
        /* holding: then release on every master */
        atomic {
          held[c] = false; valid[c] = 0;
          k = 0;
          do
          :: k < M -> if :: up[k] && rtok[k] == t -> rtok[k] = 0; rleft[k] = 0 :: else -> skip fi; k++
          :: else -> break
          od;
          k = 0
        }
     :: atomic { !(granted >= Q && valid[c] > 0) ->            /* give back on every master */
          valid[c] = 0;
          k = 0;
          do
          :: k < M -> if :: up[k] && rtok[k] == t -> rtok[k] = 0; rleft[k] = 0 :: else -> skip fi; k++
          :: else -> break
          od;
          k = 0 }
     fi;
     atomic { asked[0] = false; asked[1] = false; asked[2] = false; granted = 0; answered = 0 }
  :: a >= A -> break
  od;
  finished[c] = true
}

active proctype Monitor() {
end:
  atomic { (held[0] && valid[0] > 0 && held[1] && valid[1] > 0) -> assert(false) }
}

/* Liveness: under weak fairness every client's attempts end (granted, or refused once a majority
   is out of reach), whatever master restarts: no acquire hangs on a master. WAIT_FOR_ALL, a client
   that waits for a majority it can no longer get, must be rejected. */
ltl ends { <> (finished[0] && finished[1]) }

init {
  atomic { up[0] = true; up[1] = true; up[2] = true; run Client(0); run Client(1) }
}
