// queues/groups.pml: one group's line, as the scripts keep it (the Groups helpers of
// queues/common.lua): pushes joining the group, claims that take its message in line and put
// its next one in line, retries that keep their place, dead letters, the reaper after a
// SIGKILL or a lapsed heartbeat, a claim its rate refuses, and a cancel of a waiting message;
// for a concurrency of 1 and of 2.
//
//! models: queues/common.lua sha256=b5629e71bc96264c
//    group_enter (in line at once when none is in line, fewer than its concurrency run and
//    none waits behind; else behind the others, in order), group_settle (the next one into
//    the line when none is in line and fewer than its concurrency run), group_done (one fewer
//    running), group_back (back in line: one more in line, one fewer running),
//    group_unline (a message in line leaves it).
//! models: queues/push.lua sha256=be9e05312ec81dea
//    Producer PUSH: group_enter, one message a script.
//! models: queues/claim.lua sha256=d47190373ca2cf61
//    Worker CLAIM: the acknowledgement ends a run only when its LREM removed the envelope;
//    due messages of gwait back into ready; one message in line popped (any of them: the
//    ready zset's order across groups is not this model's business) and taken: over the
//    concurrency it goes back behind (front of its group), refused by the rate it waits in
//    gwait (no attempt spent), else it runs and its group's next may enter the line.
//! models: queues/nack.lua sha256=0d50e84fad5b3dd9
//    Worker NACK: a retry waits in gwait, still in line (group_back); a dead letter ends
//    its run (group_done).
//! models: queues/reap.lua sha256=689dde2b495866a7
//    Beat REAP: a dead consumer's messages go back in line (group_back) or are buried
//    (group_done).
//! models: tasks/cancel.lua sha256=dfee3095d94cc788
//    Canceller CANCEL: a message waiting behind its group leaves gpend; one in line (ready or
//    gwait) leaves the line (group_unline). (A claimed one is cancelled at its claim or its
//    settle: the same steps as an acknowledgement.)
//
// Abstractions: 3 messages of one group, pushed in order; max_attempts 2; 2 workers with one
// consumer each, prefetch 1; each script one atomic step; the rate is a nondeterministic
// refusal (at most two), its timing left out; the concurrency (1 or 2) is chosen once at the
// start. Faults: one SIGKILL of a worker, one lapsed heartbeat of a live worker.
//
// Properties:
//   safety  (every step) the group's counts are what Redis holds: in_line is the number of
//           its messages in ready or gwait, running the number of deliveries on processing
//           lists; in_line + running never exceeds the concurrency; the group never stalls
//           (a message waits behind it only while one is in line or the concurrency is
//           used up). With a concurrency of 1, a message is claimed only once every message
//           pushed before it has left for good (acknowledged, dead-lettered, cancelled):
//           strict order. (end) every message settled, the counts back to zero.
//   settle  (ltl, weak fairness) every message eventually leaves for good and the counts
//           are zero.
//
//! check: safety
//! check: ltl settle
//! mutant: RETRY_LEAVES_LINE expect: safety
//! mutant: STALE_ACK_ENDS_RUN expect: safety
//! mutant: REAP_KEEPS_RUNNING expect: safety
//! spin: -DCOLLAPSE -DNFAIR=3
//
//   RETRY_LEAVES_LINE   a retry ends its run (group_done) instead of staying in line: the
//                       next message overtakes it, and the count of the line is wrong.
//   STALE_ACK_ENDS_RUN  an acknowledgement ends a run even when its envelope was no longer on
//                       our list (the reaper took it back): running goes below the truth.
//   REAP_KEEPS_RUNNING  the reaper requeues a dead consumer's message without group_back:
//                       the group counts a run nobody has, and can stall.

#define NM 3
#define NW 2
#define MAXA 2
#define NONE 255
#define BIT(i) (1 << (i))

byte conc;             /* the group's concurrency: 1 or 2 */

/* Redis */
bool inready[NM];
bool ingwait[NM];
bool due[NM];
bool inpend[NM];       /* gpend: behind the group's line */
byte inproc[NM];       /* bitmask of the processing lists holding it */
byte env_f[NM];
byte in_line;          /* gstate */
byte running;
bool reg[NW];
bool lapsed[NW];

/* ghosts */
bool pushed[NM];
byte acked[NM];
byte dead[NM];
bool cancelled[NM];
bool crashed[NW];
byte crash_budget = 1;
byte lapse_budget = 1;
byte refuse_budget = 2;
byte cancel_budget = 1;
byte finished;

#define PROCS(m) ((inproc[m] & 1) + ((inproc[m] >> 1) & 1))
#define LINED(m) (inready[m] || ingwait[m])
#define LIVE(m) (LINED(m) || inpend[m] || inproc[m] != 0)
#define GONE(m) (acked[m] > 0 || dead[m] > 0 || cancelled[m])
#define SETTLED(m) (pushed[m] && GONE(m) && !LIVE(m))
#define ALL_SETTLED (SETTLED(0) && SETTLED(1) && SETTLED(2))
#define ANY_PEND (inpend[0] || inpend[1] || inpend[2])
#define BEFORE_GONE(m) ((m < 1 || GONE(0)) && (m < 2 || GONE(1)))

#define CHECK assert( \
  in_line == LINED(0) + LINED(1) + LINED(2) \
  && running == PROCS(0) + PROCS(1) + PROCS(2) \
  && in_line + running <= conc \
  && !(ANY_PEND && in_line == 0 && running < conc))

/* group_settle: the next one (the oldest behind) into the line, if the state allows */
inline next_in_line() {
  if
  :: in_line == 0 && running < conc && inpend[0] -> inpend[0] = 0; inready[0] = 1; in_line = 1
  :: in_line == 0 && running < conc && !inpend[0] && inpend[1] -> inpend[1] = 0; inready[1] = 1; in_line = 1
  :: in_line == 0 && running < conc && !inpend[0] && !inpend[1] && inpend[2] -> inpend[2] = 0; inready[2] = 1; in_line = 1
  :: else -> skip
  fi
}

inline group_done() { running--; next_in_line() }
inline group_back() { in_line++; running-- }

proctype Worker(byte w) {
  byte hm = NONE, hf;      /* the delivery in hand */
  byte am = NONE, af;      /* the acknowledgement the next claim carries */
  byte m;
  do
  :: atomic { crash_budget > 0 -> crash_budget--; crashed[w] = 1 }; break

  /* CLAIM */
  :: atomic {
       hm == NONE && (am != NONE || inready[0] || inready[1] || inready[2]
                      || (ingwait[0] && due[0]) || (ingwait[1] && due[1]) || (ingwait[2] && due[2])) ->
       if
       :: am != NONE ->
          if
          :: (inproc[am] & BIT(w)) != 0 && env_f[am] == af ->
             inproc[am] = inproc[am] & ~BIT(w); acked[am]++; group_done()
          :: else ->
#ifdef STALE_ACK_ENDS_RUN
             running--; next_in_line()
#else
             skip
#endif
          fi
       :: else -> skip
       fi;
       am = NONE; af = 0;
       reg[w] = 1; lapsed[w] = 0;
       d_step {
         if :: ingwait[0] && due[0] -> ingwait[0] = 0; due[0] = 0; inready[0] = 1 :: else -> skip fi;
         if :: ingwait[1] && due[1] -> ingwait[1] = 0; due[1] = 0; inready[1] = 1 :: else -> skip fi;
         if :: ingwait[2] && due[2] -> ingwait[2] = 0; due[2] = 0; inready[2] = 1 :: else -> skip fi
       };
       m = NONE;
       if
       :: inready[0] -> m = 0
       :: inready[1] -> m = 1
       :: inready[2] -> m = 2
       :: else -> skip
       fi;
       if
       :: m != NONE && running >= conc ->
          inready[m] = 0; inpend[m] = 1; in_line--   /* (the concurrency is the same for all) */
       :: m != NONE && running < conc && refuse_budget > 0 ->
          refuse_budget--; inready[m] = 0; ingwait[m] = 1; due[m] = 0   /* the rate refuses */
       :: m != NONE && running < conc ->
          assert(conc > 1 || BEFORE_GONE(m));
          inready[m] = 0; inproc[m] = inproc[m] | BIT(w);
          in_line--; running++; next_in_line();
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
          :: env_f[hm] >= MAXA -> dead[hm]++; group_done()
          :: else ->
             ingwait[hm] = 1; due[hm] = 0;
#ifdef RETRY_LEAVES_LINE
             group_done()
#else
             group_back()
#endif
          fi
       :: else -> skip
       fi;
       hm = NONE; hf = 0;
       CHECK
     }

  :: atomic { hm == NONE && am == NONE && ALL_SETTLED -> break }
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
                   :: env_f[m] >= MAXA -> dead[m]++; group_done()
                   :: else ->
                      inready[m] = 1;
#ifdef REAP_KEEPS_RUNNING
                      in_line++
#else
                      group_back()
#endif
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
  :: atomic { ingwait[0] && !due[0] -> due[0] = 1 }
  :: atomic { ingwait[1] && !due[1] -> due[1] = 1 }
  :: atomic { ingwait[2] && !due[2] -> due[2] = 1 }
  :: atomic { ALL_SETTLED -> break }
  od;
  finished++
}

/* push.lua for message n: group_enter */
inline push(n) {
  pushed[n] = 1;
  if
  :: in_line == 0 && running < conc && !ANY_PEND -> inready[n] = 1; in_line = 1
  :: else -> inpend[n] = 1; next_in_line()
  fi
}

/* tasks/cancel.lua on a waiting message */
inline cancel(n) {
  cancelled[n] = 1;
  if
  :: inpend[n] -> inpend[n] = 0
  :: LINED(n) -> inready[n] = 0; ingwait[n] = 0; due[n] = 0; in_line--; next_in_line()
  fi
}

proctype Producer() {
  do
  :: atomic { !pushed[1] -> push(1); CHECK }
  :: atomic { pushed[1] && !pushed[2] -> push(2); CHECK }
  :: atomic { cancel_budget > 0 && (LIVE(1) && !inproc[1] && env_f[1] == 0) ->
              cancel_budget--; cancel(1); CHECK }
  :: atomic { pushed[1] && pushed[2] -> break }
  od;
  finished++
}

init {
  byte k = 0;
  atomic {
    if :: conc = 1 :: conc = 2 fi;
#ifdef LIVENESS
    refuse_budget = 1;  /* one refusal by the rate: settling does not depend on how many, and
                           the search stays in CI's minutes */
#endif
    push(0);
    reg[0] = 1; reg[1] = 1;
    run Worker(0); run Worker(1); run Beats(); run Producer()
  };
  finished == 4;
  do
  :: k < NM -> assert(SETTLED(k)); k++
  :: else -> break
  od;
  assert(in_line == 0 && running == 0)
}

ltl settle { <> [] (ALL_SETTLED && in_line == 0 && running == 0) }
