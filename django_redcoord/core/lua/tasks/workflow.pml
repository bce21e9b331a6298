// tasks/workflow.pml: a workflow moved on by tasks/workflow.lua: the calls a member's worker
// makes once its outcome landed (lost when the worker is SIGKILLed first), the sweeps of
// every worker, and a cancel of the workflow; for a chain and a group, each with a callback,
// under each policy.
//
//! models: tasks/workflow.lua sha256=3d7bc3aa8216e42f
//    MOVE (a member's worker, after its outcome landed: the member and the ones it knows of
//    next) and SWEEP (every member): one atomic step that looks at the members it is given
//    and counts each whose record is final and whose state is still 'q' (its state leaves
//    'q' in that step), stops on a failure unless the policy is continue (fail_fast: the
//    members still waiting or running are to be cancelled, the callback skipped), starts a
//    group's members or a chain's next member once the one before it ended (its state
//    leaves 'w' in the step that pushes it), starts the callback once every started member
//    ended and no other will start, and ends the workflow (SUCCESSFUL only when every member
//    and the callback succeeded). CANCEL: the caller cancels what the step returned (the
//    member's record turns FAILED), then moves the workflow on again.
//
// Abstractions: 2 members and a callback; a member's run is one step that ends its record
// SUCCESSFUL or FAILED (a redelivery after a SIGKILL ends it the same way: the reaper and the
// runner are delivery.pml's business); a member's worker may be killed after its outcome
// landed and before it moves the workflow on (at most twice in all); the sweeper looks at
// every member whenever it runs; the kind (chain or group) and the policy (fail_fast,
// run_callback, continue) are chosen once at the start: every combination is checked.
//
// Properties:
//   safety  (every step) each member and the callback is pushed at most once; a chain's
//           second member is pushed only after the first ended; under fail_fast no member
//           and no callback is pushed after a failure was counted; the callback is pushed
//           only once every pushed member ended; the counters are the truth (ended = the
//           members counted as ended, failed = those counted failed). (end) the workflow
//           ended, and its status is SUCCESSFUL exactly when every member and the callback
//           succeeded.
//   ends    (ltl, weak fairness: the sweeper keeps sweeping) the workflow eventually ends.
//
//! check: safety
//! check: ltl ends
//! mutant: COUNT_AGAIN expect: safety
//! mutant: START_AGAIN expect: safety
//! mutant: NO_SWEEP expect: ends
//! spin: -DNFAIR=3
//
//   COUNT_AGAIN    a look counts a final member again (its state not checked): ended runs
//                  past the truth, and the callback starts while a member still runs.
//   START_AGAIN    the callback starts once the members are done, whatever its own state: a
//                  second look (the sweep, the callback's own worker) pushes it again.
//   NO_SWEEP       no worker sweeps: a member whose worker died before moving the workflow
//                  on leaves it running for ever.

#define NM 3            /* members 0, 1 and the callback (2) */
#define THEN 2

#define W 0             /* states: waiting, started (pushed), ok, failed, skipped */
#define Q 1
#define OK 2
#define FAILED 3
#define SKIPPED 4

#define NONE 0          /* a record: none, ready (pushed, not ended), succeeded, failed */
#define READY 1
#define SUCC 2
#define FAIL 3

#define CHAIN 0
#define GROUP 1
#define FAIL_FAST 0
#define RUN_CALLBACK 1
#define CONTINUE 2

#define RUNNING 0
#define SUCCESSFUL 1
#define WF_FAILED 2

byte kind, policy;
byte st[NM];
byte rec[NM];
byte ended, failed, pushed, nxt;
bool stopped;
byte status = RUNNING;

/* ghosts */
byte pushes[NM];
bool failure_counted;
byte kill_budget = 2;
bool cancel_req[NM];   /* returned to be cancelled: the caller cancels them */
byte finished;

#ifndef START_AGAIN
#define CALLBACK_WAITS (st[THEN] == W)
#else
#define CALLBACK_WAITS (st[THEN] != SKIPPED && status == RUNNING)
#endif
#ifndef COUNT_AGAIN
#define LOOKS(i) (st[i] == Q)
#else
#define LOOKS(i) (st[i] != W && st[i] != SKIPPED)
#endif

inline start(x) {
  pushes[x]++;
  assert(pushes[x] <= 1);
  assert(!(policy == FAIL_FAST && failure_counted));
  rec[x] = READY;
  st[x] = Q
}

/* one call of workflow.lua: look at the members in `given` (a bitmask), decide */
inline move(given) {
  if
  :: status == RUNNING ->
     /* 1. look */
     i = 0;
     do
     :: i < NM ->
        if
        :: (given & (1 << i)) != 0 && LOOKS(i) && (rec[i] == SUCC || rec[i] == FAIL) ->
           if
           :: rec[i] == SUCC -> st[i] = OK
           :: else -> st[i] = FAILED
           fi;
           if
           :: i != THEN ->
              ended++;
              if
              :: rec[i] == SUCC -> skip
              :: else -> failed++; failure_counted = 1
              fi
           :: else -> skip
           fi
        :: else -> skip
        fi;
        i++
     :: else -> break
     od;
     /* 2. decide: a failure stops the workflow unless the policy is continue */
     if
     :: failed > 0 && policy != CONTINUE && !stopped ->
        stopped = 1;
        if
        :: policy == FAIL_FAST ->
           i = 0;
           do
           :: i < NM -> if :: st[i] == Q -> cancel_req[i] = 1 :: else -> skip fi; i++
           :: else -> break
           od;
           if :: st[THEN] == W -> st[THEN] = SKIPPED :: else -> skip fi
        :: else -> skip
        fi
     :: else -> skip
     fi;
     if
     :: !stopped && kind == GROUP ->
        do
        :: nxt < 2 && (given & (1 << nxt)) != 0 -> start(nxt); nxt++; pushed++
        :: else -> break
        od
     :: !stopped && kind == CHAIN && nxt < 2 && (nxt == 0 || ended == pushed) && (given & (1 << nxt)) != 0 ->
        assert(nxt == 0 || st[0] == OK || st[0] == FAILED);
        start(nxt); nxt++; pushed++
     :: else -> skip
     fi;
     if
     :: ended == pushed && (stopped || pushed == 2) && CALLBACK_WAITS && (given & (1 << THEN)) != 0 ->
        assert(ended == pushed);
        start(THEN)
     :: else -> skip
     fi;
     if
     :: ended == pushed && (stopped || pushed == 2) && st[THEN] != W && st[THEN] != Q ->
        if
        :: failed == 0 && pushed == 2 && st[THEN] == OK -> status = SUCCESSFUL
        :: else -> status = WF_FAILED
        fi
     :: else -> skip
     fi;
     i = 0;
     assert(ended == (st[0] == OK || st[0] == FAILED) + (st[1] == OK || st[1] == FAILED) && failed == (st[0] == FAILED) + (st[1] == FAILED))
  :: else -> skip
  fi
}

/* a member's worker: runs it (its record turns final), then moves the workflow on, unless
   it is SIGKILLed after the outcome landed */
proctype Member(byte x) {
  byte i, g;
  do
  :: atomic { rec[x] == READY && !cancel_req[x] -> rec[x] = SUCC;
       if
       :: kill_budget > 0 -> kill_budget--
       :: g = (1 << x) | 4; if :: x == 0 -> g = g | 2 :: else -> skip fi; move(g)
       fi }
  :: atomic { rec[x] == READY && !cancel_req[x] -> rec[x] = FAIL;
       if
       :: kill_budget > 0 -> kill_budget--
       :: g = (1 << x) | 4; if :: x == 0 -> g = g | 2 :: else -> skip fi; move(g)
       fi }
  /* a cancel the workflow asked for: the record turns FAILED, then the workflow moves on */
  :: atomic { cancel_req[x] && (rec[x] == READY) -> rec[x] = FAIL; g = 7; move(g) }
  :: atomic { status != RUNNING -> break }
  od;
  finished++
}

proctype Sweeper() {
  byte i, g = 7;
  do
#ifndef NO_SWEEP
  :: atomic { status == RUNNING -> move(g) }
#endif
  :: atomic { status != RUNNING -> break }
  od;
  finished++
}

init {
  byte i, g;
  atomic {
    if :: kind = CHAIN; g = 1 :: kind = GROUP; g = 3 fi;
    if :: policy = FAIL_FAST :: policy = RUN_CALLBACK :: policy = CONTINUE fi;
    move(g);   /* the enqueue starts what starts at once */
    run Member(0); run Member(1); run Member(THEN); run Sweeper()
  };
  finished == 4;
  assert(status != RUNNING);
  assert((status == SUCCESSFUL) == (st[0] == OK && st[1] == OK && st[THEN] == OK))
}

ltl ends { <> (status != RUNNING) }
