// queues/unique.pml: a unique task's key, as the scripts keep it: the push that decides on
// it (push_unique.lua) racing the claim, the acknowledgement, retries, the reaper, a SIGKILL
// and a lapsed heartbeat; for each while_running mode and both `until`s.
//
//! models: queues/push_unique.lua sha256=f5168b4f796687df
//    Producer PUSH (twice: messages 1 and 2; message 0 is pushed first, by init): the key's
//    holder, if any: waiting ('q') and mode replace: the holder is taken out of ready or
//    delayed (a place: replaced) and this message takes the key; waiting, or mode skip:
//    a duplicate, nothing pushed; claimed ('r') and mode replace or followup: this message
//    is queued and takes the key (the holder's reverse entry is dropped). No holder: pushed,
//    holding the key. (Not modelled: a push whose record exists already pushes nothing, an
//    outbox re-send of the same task; every push here is a new task.)
//! models: queues/common.lua sha256=b5629e71bc96264c
//    unique_free (the reverse entry, and the key if this message holds it) and unique_state
//    ('r' at a claim: until 's' frees the key; 'q' at a retry or a requeue).
//! models: queues/claim.lua sha256=d47190373ca2cf61
//    Worker CLAIM: the acknowledgement frees the key only when its LREM removed the
//    envelope; promotion of due retries; ZPOPMIN of one waiting message onto our list,
//    marked 'r'.
//! models: queues/nack.lua sha256=0d50e84fad5b3dd9
//    Worker NACK: a retry waits in delayed, marked 'q'; a dead letter frees the key.
//! models: queues/reap.lua sha256=689dde2b495866a7
//    Beat REAP: a dead consumer's messages go back to ready, marked 'q', or are buried
//    (the key freed).
//
// Abstractions: 3 messages of one key (one pushed first, two pushed while the rest runs),
// max_attempts 2, 2 workers with one consumer each, prefetch 1; each script one atomic step;
// the TTL safety net is left out (past it the key is free by design, whatever the holder
// does); the hand-back (marks 'q', as a requeue) and the cancel (frees, as a dead letter) are
// the same steps as those modelled. The mode (skip, replace, followup) and `until`
// (finished, started) are chosen once, at the start: every combination is checked. Faults:
// one SIGKILL of a worker, one lapsed heartbeat of a live worker.
//
// Properties:
//   safety  (every step) bookkeeping: the key's holder, when there is one, is a message not
//           yet gone for good, waiting if until is 'started'; a reverse entry exists exactly
//           for the holder. skip with until 'finished': at most one message of the key is
//           live (waiting or claimed) at any time, so no two runs can overlap and no duplicate
//           waits. followup and replace: at most one message that never ran waits.
//           (end) every message settled (acknowledged, dead-lettered, replaced, or never
//           pushed: a duplicate), and the key is free: nothing strands it.
//   settle  (ltl, weak fairness) the key is eventually free for good (with two messages:
//           see LIVENESS in init).
//
//! check: safety
//! check: ltl settle
//! mutant: STALE_ACK_FREES expect: safety
//! mutant: REAP_BURY_KEEPS expect: safety
//! mutant: RETRY_DROPS_KEY expect: safety
//! spin: -DCOLLAPSE -DNFAIR=3
//
//   STALE_ACK_FREES  an acknowledgement frees the key even when its envelope was no longer on
//                    our list (the reaper took it back): the redelivery runs beside a new one.
//   REAP_BURY_KEEPS  the reaper buries a message without freeing its key: stranded.
//   RETRY_DROPS_KEY  a retry frees the key instead of keeping it: a duplicate waits beside it.

#define NM 3
#define NW 2
#define MAXA 2
#define NONE 255
#define BIT(i) (1 << (i))

#define SKIP 0
#define REPLACE 1
#define FOLLOWUP 2

byte mode;
bool started_frees;    /* until 's' */

/* Redis */
bool inready[NM];
bool indelayed[NM];
bool due[NM];
byte inproc[NM];       /* bitmask of the processing lists holding it */
byte env_f[NM];
byte holder = NONE;    /* uniq: the key's holder */
bool hrun;             /* ... its state 'r' (else 'q') */
bool ids[NM];          /* uniq_ids: the reverse entry */
bool reg[NW];
bool lapsed[NW];

/* ghosts */
bool pushed[NM];
bool dup[NM];          /* a push that found the key held: nothing pushed */
bool ran[NM];          /* claimed at least once */
byte acked[NM];
byte dead[NM];
byte replaced[NM];
bool crashed[NW];
byte crash_budget = 1;
byte lapse_budget = 1;
byte finished;

#define WAITING(m) (inready[m] || indelayed[m])
#define LIVE(m) (WAITING(m) || inproc[m] != 0)
#define GONE(m) (!pushed[m] || acked[m] > 0 || dead[m] > 0 || replaced[m] > 0)
#define SETTLED(m) (GONE(m) && !LIVE(m))
#define ALL_SETTLED (SETTLED(0) && SETTLED(1) && SETTLED(2))
#define PUSHES_DONE ((pushed[1] || dup[1]) && (pushed[2] || dup[2]))
#define FRESH_WAITING(m) (WAITING(m) && !ran[m])

inline free_key(m) {
  if
  :: ids[m] -> ids[m] = 0; if :: holder == m -> holder = NONE :: else -> skip fi
  :: else -> skip
  fi
}

inline mark(m, running) {
  if
  :: ids[m] && holder != m -> ids[m] = 0
  :: ids[m] && holder == m && running && started_frees -> ids[m] = 0; holder = NONE
  :: ids[m] && holder == m && !(running && started_frees) -> hrun = running
  :: else -> skip
  fi
}

#define CHECK assert( \
  (holder == NONE || (!GONE(holder) && LIVE(holder) && (!started_frees || !hrun))) \
  && (ids[0] == (holder == 0)) && (ids[1] == (holder == 1)) && (ids[2] == (holder == 2)) \
  && (mode != SKIP || started_frees || (LIVE(0) + LIVE(1) + LIVE(2) <= 1)) \
  && (FRESH_WAITING(0) + FRESH_WAITING(1) + FRESH_WAITING(2) <= 1))

proctype Worker(byte w) {
  byte hm = NONE, hf;      /* the delivery in hand */
  byte am = NONE, af;      /* the acknowledgement the next claim carries */
  byte m;
  do
  :: atomic { crash_budget > 0 -> crash_budget--; crashed[w] = 1 }; break

  /* CLAIM */
  :: atomic {
       hm == NONE && (am != NONE || inready[0] || inready[1] || inready[2]
                      || (indelayed[0] && due[0]) || (indelayed[1] && due[1]) || (indelayed[2] && due[2])) ->
       if
       :: am != NONE ->
          if
          :: (inproc[am] & BIT(w)) != 0 && env_f[am] == af ->
             inproc[am] = inproc[am] & ~BIT(w); acked[am]++; free_key(am)
          :: else ->
#ifdef STALE_ACK_FREES
             free_key(am)
#else
             skip
#endif
          fi
       :: else -> skip
       fi;
       am = NONE; af = 0;
       reg[w] = 1; lapsed[w] = 0;
       d_step {
         if :: indelayed[0] && due[0] -> indelayed[0] = 0; due[0] = 0; inready[0] = 1 :: else -> skip fi;
         if :: indelayed[1] && due[1] -> indelayed[1] = 0; due[1] = 0; inready[1] = 1 :: else -> skip fi;
         if :: indelayed[2] && due[2] -> indelayed[2] = 0; due[2] = 0; inready[2] = 1 :: else -> skip fi
       };
       m = NONE;
       if
       :: inready[0] -> m = 0
       :: inready[1] -> m = 1
       :: inready[2] -> m = 2
       :: else -> skip
       fi;
       if
       :: m != NONE ->
          inready[m] = 0; inproc[m] = inproc[m] | BIT(w); ran[m] = 1;
          mark(m, 1);
          hm = m; hf = env_f[m]
       :: else -> skip
       fi;
       m = 0;
       CHECK
     }

  /* the task returns: acknowledged with the next claim */
  :: atomic { hm != NONE -> am = hm; af = hf; hm = NONE; hf = 0 }

  /* the task raises: NACK */
  :: atomic {
       hm != NONE ->
       if
       :: (inproc[hm] & BIT(w)) != 0 && env_f[hm] == hf ->
          inproc[hm] = inproc[hm] & ~BIT(w); env_f[hm] = hf + 1;
          if
          :: env_f[hm] >= MAXA -> dead[hm]++; free_key(hm)
          :: else ->
             indelayed[hm] = 1; due[hm] = 0;
#ifdef RETRY_DROPS_KEY
             free_key(hm)
#else
             mark(hm, 0)
#endif
          fi
       :: else -> skip
       fi;
       hm = NONE; hf = 0;
       CHECK
     }

  :: atomic { hm == NONE && am == NONE && ALL_SETTLED && PUSHES_DONE -> break }
  od;
  finished++
}

proctype Beats() {
  byte c, m;
  do
  :: atomic { !crashed[0] && (!reg[0] || lapsed[0]) -> reg[0] = 1; lapsed[0] = 0 }
  :: atomic { !crashed[1] && (!reg[1] || lapsed[1]) -> reg[1] = 1; lapsed[1] = 0 }
  /* REAP */
  :: atomic {
       (reg[0] && lapsed[0]) || (reg[1] && lapsed[1]) ->
       c = 0;
       do
       :: c < NW ->
          if
          :: reg[c] && lapsed[c] ->
             m = 0;
             do
             :: m < NM ->
                if
                :: (inproc[m] & BIT(c)) != 0 ->
                   inproc[m] = inproc[m] & ~BIT(c); env_f[m] = env_f[m] + 1;
                   if
                   :: env_f[m] >= MAXA ->
                      dead[m]++;
#ifndef REAP_BURY_KEEPS
                      free_key(m)
#else
                      skip
#endif
                   :: else -> inready[m] = 1; mark(m, 0)
                   fi
                :: else -> skip
                fi; m++
             :: else -> break
             od;
             reg[c] = 0; lapsed[c] = 0
          :: else -> skip
          fi; c++
       :: else -> break
       od;
       c = 0; m = 0;
       CHECK
     }
  /* TIME */
  :: atomic { reg[0] && !lapsed[0] && (crashed[0] || lapse_budget > 0) ->
              lapsed[0] = 1; if :: !crashed[0] -> lapse_budget-- :: else -> skip fi }
  :: atomic { reg[1] && !lapsed[1] && (crashed[1] || lapse_budget > 0) ->
              lapsed[1] = 1; if :: !crashed[1] -> lapse_budget-- :: else -> skip fi }
  :: atomic { indelayed[0] && !due[0] -> due[0] = 1 }
  :: atomic { indelayed[1] && !due[1] -> due[1] = 1 }
  :: atomic { indelayed[2] && !due[2] -> due[2] = 1 }
  :: atomic { ALL_SETTLED && PUSHES_DONE -> break }
  od;
  finished++
}

/* push_unique.lua for message n */
inline push(n) {
  if
  :: holder == NONE -> skip
  :: holder != NONE && !hrun && mode == REPLACE ->
     /* the waiting holder taken out (as pushed, with its failed count, in ready or delayed) */
     inready[holder] = 0; indelayed[holder] = 0; due[holder] = 0; replaced[holder]++;
     ids[holder] = 0; holder = NONE
  :: holder != NONE && hrun && mode != SKIP -> ids[holder] = 0; holder = NONE
  :: else -> dup[n] = 1
  fi;
  if
  :: !dup[n] -> pushed[n] = 1; inready[n] = 1; holder = n; hrun = 0; ids[n] = 1
  :: else -> skip
  fi
}

proctype Producer() {
  do
  :: atomic { !pushed[1] && !dup[1] -> push(1); CHECK }
  :: atomic { (pushed[1] || dup[1]) && !pushed[2] && !dup[2] -> push(2); CHECK }
  :: atomic { PUSHES_DONE -> break }
  od;
  finished++
}

init {
  byte k = 0;
  atomic {
    if :: mode = SKIP :: mode = REPLACE :: mode = FOLLOWUP fi;
    if :: started_frees = 0 :: started_frees = 1 fi;
    push(0);
#ifdef LIVENESS
    dup[2] = 1;  /* the liveness check pushes one message less: the key's release does not
                    depend on how many pushes came, and the search stays in CI's minutes */
#endif
    reg[0] = 1; reg[1] = 1;
    run Worker(0); run Worker(1); run Beats(); run Producer()
  };
  finished == 4;
  do
  :: k < NM -> assert(SETTLED(k) && !ids[k]); k++
  :: else -> break
  od;
  assert(holder == NONE)
}

ltl settle { <> [] (holder == NONE && ALL_SETTLED) }
