// queues/delivery.pml: the delivery path of a queued Django Task, as the scripts and the
// worker run it: push, claim (with the acknowledgement it carries), the outcome in the
// task's result record, nack (retry, dead letter at max_attempts), the heartbeat, the
// reaper and the settle list; and a cancel (tasks/cancel.lua) racing all of them.
//
// The unique-key bookkeeping the claim, nack, reap and cancel scripts also keep (KEYS uniq and
// uniq_ids: queues/common.lua's unique helpers) never moves a message or writes a record: it is
// modelled apart, in queues/unique.pml. So is a grouped message's line (flag 8: the group
// helpers of queues/common.lua, KEYS gpend, gstate and gwait): queues/groups.pml.
//! models: queues/push.lua sha256=be9e05312ec81dea
//    init PUSH: the envelope (failed 0) to ready and the result record (READY, with the
//    envelope as pushed), one script per message, both before the workers start. (A
//    negative TTL, an outbox re-send that pushes nothing when the record exists, is not
//    modelled: each message is pushed once.)
//! models: queues/claim.lua sha256=d47190373ca2cf61
//    Worker CLAIM: LREM of the acknowledged envelope from the consumer's own processing
//    list, ZADD of its heartbeat deadline, promotion of due delayed messages, then recover
//    (recover='1' and our list not empty: a claim whose reply was lost) or ZPOPMIN one
//    ready message onto our list (prefetch 1). One lost reply is modelled: the claim ran,
//    the worker saw nothing, its acknowledgement goes again with the next claim. A paused
//    queue (KEYS[7]) skips the ZPOPMIN (and the recover pops nothing new): such a claim is
//    the model's claim on an empty ready set (acknowledge, heartbeat, promote), so a pause
//    adds no step the model lacks. The cancels zset (KEYS[8]): an acknowledgement that
//    removed its envelope from our list also removes the message's entry; a claimed
//    message (recovered or popped) with an entry is dropped: off our list, entry removed,
//    never delivered.
//! models: queues/nack.lua sha256=0d50e84fad5b3dd9
//    Worker NACK: LREM of the exact envelope from our list (0: "gone", nothing done),
//    failed+1, then delayed (a retry) or bury (dead list, settle entry).
//! models: queues/reap.lua sha256=689dde2b495866a7
//    Beat REAP: every consumer whose deadline passed loses its whole list: each envelope
//    failed+1, back to ready or buried; DEL list, ZREM consumer.
//! models: queues/heartbeat.lua sha256=934a072183327323
//    Beat HEARTBEAT: ZADD of the worker's consumer deadline (re-adds a reaped consumer).
//! models: queues/common.lua sha256=b5629e71bc96264c
//    bury (dead list + settle entry "<id>\n{attempts...}" for a message with a record),
//    with_failed; requeued (OPERATOR_REQUEUE only).
//! models: tasks/cancel.lua sha256=dfee3095d94cc788
//    Canceller CANCEL, once, of message 0 (the two are symmetric), at any time: an envelope
//    of it in ready or delayed (any failed count, either REQUEUED flag) is removed (a place:
//    cancelled) and the record written FAILED, unless it is SUCCESSFUL (a redelivery of a
//    success: taken out, the record kept); else, a record SUCCESSFUL, or a dead letter
//    (HEXISTS errors, whatever the record says yet): nothing; else an entry in the cancels zset and the record
//    FAILED. The worker's poll of its held tasks: a delivery whose record was cancelled may
//    end by an acknowledgement, without an outcome (Cancelled), or past its grace by a dead
//    letter (the timeout path). bury (nack, reap) removes the cancels entry. A requeued dead
//    letter's reopen (results.lua guard 'reopen') is refused once cancelled: acknowledged
//    unrun.
//! models: queues/requeue_dead_letter.lua sha256=306bfe43777475db
//    Operator REQUEUE (only with -DOPERATOR_REQUEUE): one dead letter back to ready,
//    failed 0, flag REQUEUED, its settle entry removed (unsettle).
//! models: tasks/results.lua sha256=bdaad66cfb781068
//    The guards of the record writes made by django_redcoord/tasks/runner.py (not modelled:
//    its claim-time write of worker.d alone, guard d, right after a claim, and guard
//    'unclaim', which takes that mark back for messages handed back unstarted: they touch
//    worker.d only, never a status or an outcome, so no property here can see them):
//      Worker FLUSH   the held-back SUCCESSFUL of delivery d, guard d (refused once the
//                     record is SUCCESSFUL/FAILED or holds error.d), before the claim that
//                     carries its acknowledgement;
//      Worker MARK    a retry (delivery d >= 2) writes RUNNING, guard d (see PROPOSED FIX);
//                     the first delivery of a requeued dead letter writes RUNNING with guard
//                     'reopen' (error.N cleared);
//      Worker FAILED  a delivery d that raised writes error.d and READY (FAILED at the last
//                     attempt), guard d, before its nack;
//      Beat SETTLE    worker._settle: LRANGE settle; results.lua guard 'dead' (FAILED and
//                     error.<attempts> unless the record holds an outcome); LREM the entries
//                     read: three round trips.
//
// PROPOSED FIX modelled: runner.py writes a retry's RUNNING mark with guard '' (whenever
// the record exists). A retry delivery that stalls before that write, whose message is
// meanwhile reaped and settled by another delivery (or dead-lettered), then overwrites the
// outcome with RUNNING; if it then raises, the record ends READY (or RUNNING) while its
// message is acknowledged or dead-lettered for good. SPIN finds it: the mutant
// UNGUARDED_RETRY_MARK is the code as it is. This model writes the mark with guard d.
//
// Abstractions: 2 messages, max_attempts 2, 2 workers with one consumer each (one thread,
// prefetch 1); each script is one atomic step; time is abstract: Beats' TIME lets a
// consumer's deadline pass (any time for a SIGKILLed worker's consumer; once for a live
// one: a SIGSTOP, GC pause or Redis pause longer than WORKER_TIMEOUT), and makes a delayed
// message due. Ready order is any order (ZPOPMIN's order is not relied on). A task's
// outcome is chosen freely at each delivery (it returns, or it raises). Faults: one SIGKILL
// of a worker (its threads stop, its local state is lost), one lost claim reply, one lapsed
// heartbeat of a live worker.
//
// Properties:
//   safety  (every step) every pushed message is in exactly one place: ready, delayed, one
//           processing list, the dead list, or acknowledged: nothing vanishes, nothing is
//           duplicated; (Worker) an acknowledgement removes only the delivery it
//           acknowledges (the envelope on the acknowledging consumer's own list); a message
//           is delivered at most max_attempts times (per operator requeue); (end) every
//           message ends acknowledged or dead-lettered, an acknowledged one's record is
//           SUCCESSFUL, a dead-lettered one's record FAILED, or SUCCESSFUL when a delivery
//           of it returned and its outcome landed first (the late outcome of a worker whose
//           message was reaped on its last attempt: first outcome wins).
//           A cancelled message is never delivered after its cancel; its record ends FAILED
//           (SUCCESSFUL if it was already); no cancels entry is left at the end.
//   settle  (ltl, weak fairness) every message eventually leaves the system for good
//           (acknowledged, dead-lettered or cancelled), whatever the faults above.
//
//! check: safety
//! check: ltl settle
//! mutant: ACK_ANY_OWNER expect: safety
//! mutant: REAP_DROPS expect: safety
//! mutant: SETTLE_KEEPS expect: safety
//! mutant: NO_PROMOTE expect: settle
//! mutant: UNGUARDED_RETRY_MARK expect: safety
//! mutant: OPERATOR_REQUEUE expect: safety
//! mutant: STALE_ACK_FORGETS_CANCEL expect: safety
//! mutant: CLAIM_IGNORES_CANCELS expect: safety
//! spin: -DCOLLAPSE -DNFAIR=3
//
//   ACK_ANY_OWNER   the acknowledgement removes the message from whichever processing list
//                   holds it, whatever its envelope (no ownership check).
//   REAP_DROPS      the reaper deletes a dead consumer's list without requeueing it.
//   SETTLE_KEEPS    the last attempt's nack writes the dead letter (after the FAILED
//                   record) without removing the envelope from the processing list.
//   NO_PROMOTE      the claim never promotes due delayed messages (a retry waits forever).
//   UNGUARDED_RETRY_MARK  the code today: a retry's RUNNING mark is written with guard ''.
//   OPERATOR_REQUEUE      a known race, kept as a counterexample: an operator requeues a
//                   dead letter (requeue_dead_letter.lua) while a settle pass has read its
//                   settle entry; the pass then marks FAILED the record its new delivery
//                   reopened, and that delivery's success is refused: acknowledged, FAILED.
//   STALE_ACK_FORGETS_CANCEL  the acknowledgement removes the message's cancels entry even
//                   when its envelope was no longer on our list (the reaper took it back):
//                   the next delivery of a cancelled message then runs.
//   CLAIM_IGNORES_CANCELS  the claim delivers a message whatever its cancels entry.

#define NM 2        /* messages */
#define NW 2        /* workers (one consumer each) */
#define MAXA 2      /* max_attempts */
#define NONE 255
#define BIT(i) (1 << (i))

/* result record status */
#define R_READY 1
#define R_RUNNING 2
#define R_OK 3
#define R_FAILED 4
#define FINAL(s) ((s) == R_OK || (s) == R_FAILED)

/* phases of a worker thread */
#define P_IDLE 0
#define P_MARK 1
#define P_RUN 2
#define P_NACK 3

/* Redis: where each message is */
bool inready[NM];
bool indelayed[NM];
bool due[NM];          /* its delayed score has passed */
byte inproc[NM];       /* bitmask of the processing lists holding it */
byte indead[NM];       /* copies on the dead list */
byte env_f[NM];        /* envelope: failed attempts */
bool env_q[NM];        /* envelope: flag REQUEUED */
byte settle[NM];       /* its settle entry: attempts + 4 * requeues (0: no entry) */
byte rec[NM];          /* result record status */
byte errs[NM];         /* bitmask of the error.N fields of the record */
bool reg[NW];          /* consumer in the consumers zset */
bool cancels[NM];      /* its entry in the cancels zset */
bool lapsed[NW];       /* its deadline has passed */

/* ghosts */
bool pushed[NM];
byte acked[NM];        /* removals by an acknowledgement */
bool ran_ok[NM];       /* a delivery of it returned */
byte starts[NM];       /* deliveries that started the task */
byte requeues[NM];
bool crashed[NW];
bool cancelled[NM];    /* tasks/cancel.lua cancelled it (REMOVED or REQUESTED, or took out a
                          waiting redelivery of a success) */
bool ok_at_cancel[NM]; /* ... the last: its record stays SUCCESSFUL */
byte removed[NM];      /* taken out by the cancel, or dropped by a claim: a place */
byte finished;         /* processes that ended */

byte crash_budget = 1;
byte lost_budget = 1;
byte lapse_budget = 1;
byte cancel_budget = 1;
#ifdef OPERATOR_REQUEUE
byte requeue_budget = 1;
bool op_done;
#else
byte requeue_budget = 0;
bool op_done = 1;
#endif

#define PLACES(m) (inready[m] + indelayed[m] + ((inproc[m] & 1) != 0) + ((inproc[m] & 2) != 0) + indead[m] + acked[m] \
                   + removed[m])
#define ONE_PLACE(m) (!pushed[m] || PLACES(m) == 1)
#define SETTLED(m) (pushed[m] && (acked[m] > 0 || indead[m] > 0 || removed[m] > 0) && !inready[m] && !indelayed[m] \
                    && inproc[m] == 0)
#define ALL_SETTLED (SETTLED(0) && SETTLED(1))
#define NO_SETTLE (settle[0] == 0 && settle[1] == 0)
#define WORK(w) (inready[0] || inready[1] || (indelayed[0] && due[0]) || (indelayed[1] && due[1]) \
                 || inproc[0] & BIT(w) || inproc[1] & BIT(w) || !reg[w] || lapsed[w])

/* common.lua bury: the dead list, and a settle entry (the message has a record) */
inline bury(m, attempts) {
  indead[m]++;
  cancels[m] = 0;                          /* ZREM cancels <id> */
  settle[m] = attempts + 4 * requeues[m]   /* an entry differs from an older one's (failed_ms) */
}

/* Nothing vanishes, nothing is duplicated: checked at the end of every step that moves a
   message. */
#define PLACED assert(ONE_PLACE(0) && ONE_PLACE(1))

proctype Worker(byte w) {
  byte phase = P_IDLE;
  byte hm = NONE, hf, d;   /* the delivery in hand: message, envelope's failed, delivery number */
  bool hq;                 /* ... envelope's REQUEUED flag */
  byte am = NONE, af;      /* the acknowledgement the next claim carries */
  bool aq;
  byte om = NONE, odl;     /* the held-back SUCCESSFUL outcome: message, delivery */
  byte m;

  do
  /* SIGKILL: the process and its local state are gone; its consumer stays until reaped */
  :: atomic { crash_budget > 0 -> crash_budget--; crashed[w] = 1 }; break

  /* FLUSH: runner.flush() before the claim: results.lua guard d */
  :: atomic {
       phase == P_IDLE && om != NONE ->
       if
       :: !FINAL(rec[om]) && (errs[om] & BIT(odl)) == 0 -> rec[om] = R_OK
       :: else -> skip
       fi;
       om = NONE; odl = 0
     }

  /* CLAIM: claim.lua (blocked when it would change nothing: the worker waits on BLPOP) */
  :: atomic {
       phase == P_IDLE && om == NONE && (am != NONE || WORK(w)) ->
       if                                      /* ARGV[5..]: LREM processing 1 <envelope> */
       :: am != NONE ->
#ifdef ACK_ANY_OWNER
          if
          :: inproc[am] != 0 ->
             assert((inproc[am] & BIT(w)) != 0 && env_f[am] == af && env_q[am] == aq);
             inproc[am] = 0; acked[am]++
          :: else -> skip
          fi
#else
          if
          :: (inproc[am] & BIT(w)) != 0 && env_f[am] == af && env_q[am] == aq ->
             inproc[am] = inproc[am] & ~BIT(w); acked[am]++;
             cancels[am] = 0                   /* ZREM cancels <id>: only when LREM removed it */
          :: else ->
#ifdef STALE_ACK_FORGETS_CANCEL
             cancels[am] = 0
#else
             skip
#endif
          fi
#endif
       :: else -> skip
       fi;
       reg[w] = 1; lapsed[w] = 0;              /* ZADD consumers <deadline> <processing> */
#ifndef NO_PROMOTE
       d_step {                                /* due delayed messages to ready */
         if :: indelayed[0] && due[0] -> indelayed[0] = 0; due[0] = 0; inready[0] = 1 :: else -> skip fi;
         if :: indelayed[1] && due[1] -> indelayed[1] = 0; due[1] = 0; inready[1] = 1 :: else -> skip fi
       };
#endif
       m = NONE;
       if                                      /* recover = '1': we hold nothing */
       :: (inproc[0] & BIT(w)) != 0 -> m = 0
       :: (inproc[1] & BIT(w)) != 0 -> m = 1
       :: else ->
          if                                   /* ZPOPMIN ready 1; RPUSH processing */
          :: inready[0] -> m = 0
          :: inready[1] -> m = 1
          :: else -> skip
          fi;
          if
          :: m != NONE -> inready[m] = 0; inproc[m] = inproc[m] | BIT(w)
          :: else -> skip
          fi
       fi;
#ifndef CLAIM_IGNORES_CANCELS
       if                                      /* a cancelled message: dropped, not delivered */
       :: m != NONE && cancels[m] -> inproc[m] = inproc[m] & ~BIT(w); cancels[m] = 0; removed[m]++; m = NONE
       :: else -> skip
       fi;
#endif
       if
       :: m != NONE && lost_budget > 0 ->
          lost_budget--                        /* the reply is lost: nothing seen, acks kept */
       :: else ->
          am = NONE; af = 0; aq = 0;
          if
          :: m != NONE ->
             hm = m; hf = env_f[m]; hq = env_q[m]; d = hf + 1;
             starts[m]++;
             assert(!cancelled[m]);            /* never delivered after its cancel */
             assert(starts[m] <= MAXA * (1 + requeues[m]));
             if
             :: d >= 2 || hq -> phase = P_MARK
             :: else -> phase = P_RUN
             fi
          :: else -> skip
          fi
       fi;
       m = 0;
       PLACED
     }

  /* MARK: a retry marks its record RUNNING; a requeued dead letter's first delivery
     reopens it (guard 'reopen': error.N cleared) */
  :: atomic {                               /* a reopen refused (cancelled): acknowledged unrun */
       phase == P_MARK && hq && d == 1 && cancelled[hm] ->
       am = hm; af = hf; aq = hq;
       hm = NONE; hf = 0; hq = 0; d = 0; phase = P_IDLE
     }
  :: atomic {
       phase == P_MARK && !(hq && d == 1 && cancelled[hm]) ->
       if
       :: hq && d == 1 -> errs[hm] = 0; rec[hm] = R_RUNNING
#ifdef UNGUARDED_RETRY_MARK
       :: else -> rec[hm] = R_RUNNING                                   /* guard '' */
#else
       :: else ->                                                       /* guard d */
          if
          :: !FINAL(rec[hm]) && (errs[hm] & BIT(d)) == 0 -> rec[hm] = R_RUNNING
          :: else -> skip
          fi
#endif
       fi;
       phase = P_RUN
     }

  /* the task returns: its outcome is held back, its acknowledgement collected */
  :: atomic {
       phase == P_RUN ->
       ran_ok[hm] = 1; om = hm; odl = d; am = hm; af = hf; aq = hq;
       hm = NONE; hf = 0; hq = 0; d = 0; phase = P_IDLE;
       PLACED
     }

  /* the worker's poll saw the cancel: the task ends (CancelledError, context.cancelled()),
     nothing is written, the message is acknowledged (Cancelled) */
  :: atomic {
       phase == P_RUN && cancelled[hm] ->
       am = hm; af = hf; aq = hq;
       hm = NONE; hf = 0; hq = 0; d = 0; phase = P_IDLE
     }

  /* ... or it runs past its grace: the timeout path dead-letters it (nack, dead now) */
  :: atomic {
       phase == P_RUN && cancelled[hm] ->
       if
       :: (inproc[hm] & BIT(w)) != 0 && env_f[hm] == hf && env_q[hm] == hq ->
          inproc[hm] = inproc[hm] & ~BIT(w); env_f[hm] = hf + 1; bury(hm, env_f[hm])
       :: else -> skip
       fi;
       hm = NONE; hf = 0; hq = 0; d = 0; phase = P_IDLE;
       PLACED
     }

  /* the task raises: runner._failed writes error.d and READY/FAILED, guard d */
  :: atomic {
       phase == P_RUN ->
       if
       :: !FINAL(rec[hm]) && (errs[hm] & BIT(d)) == 0 ->
          errs[hm] = errs[hm] | BIT(d);
          if
          :: d >= MAXA -> rec[hm] = R_FAILED
          :: else -> rec[hm] = R_READY
          fi
       :: else -> skip
       fi;
       phase = P_NACK
     }

  /* NACK: nack.lua */
  :: atomic {
       phase == P_NACK ->
       if
       :: (inproc[hm] & BIT(w)) != 0 && env_f[hm] == hf && env_q[hm] == hq ->
#ifdef SETTLE_KEEPS
          if
          :: hf + 1 < MAXA -> inproc[hm] = inproc[hm] & ~BIT(w)
          :: else -> skip
          fi;
#else
          inproc[hm] = inproc[hm] & ~BIT(w);
#endif
          env_f[hm] = hf + 1;
          if
          :: env_f[hm] >= MAXA -> bury(hm, env_f[hm])
          :: else -> indelayed[hm] = 1; due[hm] = 0
          fi
       :: else -> skip                         /* 0: gone (the reaper took it back) */
       fi;
       hm = NONE; hf = 0; hq = 0; d = 0; phase = P_IDLE;
       PLACED
     }

  :: atomic { phase == P_IDLE && om == NONE && am == NONE && ALL_SETTLED && op_done -> break }
  od;
  finished++
}

/* The workers' beat threads (any live worker's: at most one worker is SIGKILLed):
   heartbeats, the reaper, settle passes; and time passing. */
proctype Beats() {
  byte s0, s1;             /* settle entries read (0: none) */
  bool snapped, wrote;
  byte c, m;

  do
  /* HEARTBEAT: heartbeat.lua, each live worker for its consumer */
  :: atomic { !crashed[0] && (!reg[0] || lapsed[0]) -> reg[0] = 1; lapsed[0] = 0 }
  :: atomic { !crashed[1] && (!reg[1] || lapsed[1]) -> reg[1] = 1; lapsed[1] = 0 }

  /* REAP: reap.lua, every consumer whose deadline passed */
  :: atomic {
       (reg[0] && lapsed[0]) || (reg[1] && lapsed[1]) ->
       d_step {
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
                     inproc[m] = inproc[m] & ~BIT(c);
#ifndef REAP_DROPS
                     env_f[m] = env_f[m] + 1;
                     if
                     :: env_f[m] >= MAXA -> bury(m, env_f[m])
                     :: else -> inready[m] = 1
                     fi
#endif
                  :: else -> skip
                  fi; m++
               :: else -> break
               od;
               reg[c] = 0; lapsed[c] = 0
            :: else -> skip
            fi; c++
         :: else -> break
         od;
         c = 0; m = 0
       };
       PLACED
     }

  /* SETTLE 1: LRANGE settle */
  :: atomic { !snapped && !NO_SETTLE -> s0 = settle[0]; s1 = settle[1]; snapped = 1 }
  /* SETTLE 2: results.lua guard 'dead': FAILED and error.<attempts> */
  :: atomic {
       snapped && !wrote ->
       if :: s0 != 0 && !FINAL(rec[0]) -> rec[0] = R_FAILED; errs[0] = errs[0] | BIT(s0 % 4) :: else -> skip fi;
       if :: s1 != 0 && !FINAL(rec[1]) -> rec[1] = R_FAILED; errs[1] = errs[1] | BIT(s1 % 4) :: else -> skip fi;
       wrote = 1
     }
  /* SETTLE 3: LREM settle <entry> */
  :: atomic {
       snapped && wrote ->
       if :: s0 != 0 && settle[0] == s0 -> settle[0] = 0 :: else -> skip fi;
       if :: s1 != 0 && settle[1] == s1 -> settle[1] = 0 :: else -> skip fi;
       snapped = 0; wrote = 0; s0 = 0; s1 = 0
     }

  /* TIME: a deadline passes (a dead worker's; once a live one's), a delayed message falls due */
  :: atomic { reg[0] && !lapsed[0] && (crashed[0] || lapse_budget > 0) ->
              lapsed[0] = 1; if :: !crashed[0] -> lapse_budget-- :: else -> skip fi }
  :: atomic { reg[1] && !lapsed[1] && (crashed[1] || lapse_budget > 0) ->
              lapsed[1] = 1; if :: !crashed[1] -> lapse_budget-- :: else -> skip fi }
  :: atomic { indelayed[0] && !due[0] -> due[0] = 1 }
  :: atomic { indelayed[1] && !due[1] -> due[1] = 1 }

  :: atomic { ALL_SETTLED && op_done && NO_SETTLE && !snapped -> break }
  od;
  finished++
}

/* tasks/cancel.lua, once, of message 0 (the messages are symmetric: pushed alike, served by
   the same workers, so cancelling 0 stands for cancelling either) */
proctype Canceller() {
  byte m;
  do
  :: atomic {
       cancel_budget > 0 ->
       cancel_budget--;
       m = 0;
       if
       :: inready[m] || indelayed[m] ->      /* ZREM ready/delayed <envelope>: never delivered again */
          inready[m] = 0; indelayed[m] = 0; due[m] = 0; removed[m]++; cancelled[m] = 1;
          if
          :: rec[m] == R_OK -> ok_at_cancel[m] = 1   /* a redelivery of a success: FINISHED */
          :: else -> rec[m] = R_FAILED
          fi
       :: else ->
          if
          :: rec[m] == R_OK -> skip            /* it had an outcome: nothing changed */
          :: rec[m] != R_OK && indead[m] > 0 -> skip   /* a dead letter (HEXISTS errors) */
          :: else -> cancels[m] = 1; rec[m] = R_FAILED; cancelled[m] = 1
          fi
       fi;
       m = 0;
       PLACED
     }
  :: atomic { cancel_budget = 0 }; break
  od;
  finished++
}

#ifdef OPERATOR_REQUEUE
/* requeue_dead_letter.lua, at most once; the settle entry (its "<id>\n" prefix) removed */
proctype Operator() {
  do
  :: atomic { requeue_budget > 0 && indead[0] > 0 ->
              requeue_budget--; indead[0]--; inready[0] = 1; env_f[0] = 0; env_q[0] = 1;
              settle[0] = 0; requeues[0]++ }
  :: atomic { requeue_budget > 0 && indead[1] > 0 ->
              requeue_budget--; indead[1]--; inready[1] = 1; env_f[1] = 0; env_q[1] = 1;
              settle[1] = 0; requeues[1]++ }
  :: atomic { op_done = 1 }; break
  od;
  finished++
}
#define PROCS 5
#else
#define PROCS 4
#endif

init {
  byte k = 0;
  atomic {
    /* PUSH: push.lua, both messages before the workers start (pushes commute with the rest) */
    inready[0] = 1; rec[0] = R_READY; pushed[0] = 1;
    inready[1] = 1; rec[1] = R_READY; pushed[1] = 1;
    reg[0] = 1; reg[1] = 1;                     /* the workers' first heartbeats */
    run Worker(0); run Worker(1); run Beats(); run Canceller()
#ifdef OPERATOR_REQUEUE
    ; run Operator()
#endif
  };
  finished == PROCS;
  /* every message settled; records agree with where their messages ended */
  do
  :: k < NM ->
     assert(SETTLED(k));
     assert(acked[k] == 0 || rec[k] == R_OK || cancelled[k]);
     assert(!cancelled[k] || rec[k] == R_FAILED || ok_at_cancel[k] || requeues[k] > 0);
     assert(!cancels[k]);
     assert(indead[k] == 0 || rec[k] == R_FAILED || (rec[k] == R_OK && ran_ok[k]));
     k++
  :: else -> break
  od
}

ltl settle { <> [] (SETTLED(0) && SETTLED(1)) }
