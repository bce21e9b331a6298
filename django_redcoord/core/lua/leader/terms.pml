// leader/terms.pml: leader terms and the periodic slot claim, as the scripts and the
// scheduler run them: campaign (elect, renew, replace a record of our own past), a term
// from a hybrid logical clock with the candidate's floor, the record's lease, a leader
// paused past its lease, a SIGKILLed leader, Redis restarted without its data, a lost
// campaign reply, the scheduler's term-fenced slot claims and "run now" requests.
//
//! models: leader/campaign.lua sha256=86efeced5580a003
//    Candidate CAMPAIGN: renew (the record holds our token), code 0 (another token,
//    other than our stale one: seen := max(seen, its term)), or elect: next_monotonic of
//    common/time.lua, raised above ARGV[6] seen, a fresh token, a new record. One reply
//    may be lost (LeaderElection._round: a standby then keeps `fresh` as its stale token).
//! models: common/time.lua sha256=65235869e5285e2d
//    next_monotonic: term = max(last + 1, server clock). Each script run reads a later
//    server clock than the one before (a script takes longer than a microsecond): `srv_now`
//    advances at each election; Redis restarted without its data keeps its clock.
//! models: periodic/claim.lua sha256=2f49deaffcfc8d7f
//    Candidate CLAIM: the fence (record token and term = the caller's), then slot <= last_slot
//    (code 2) or last_slot := slot, mode 'run' or 'skip' (Scheduler._tick_job, misfire
//    coalesce: the latest due slot runs, older ones count as missed; a job without state
//    skips previous_slot(now) first). Not modelled: schedule edits (the version check,
//    code 4: here the schedule is the declared one, version 0), pause (code 3), 'adhoc',
//    the same-token retry of a claim whose reply was lost.
//! models: periodic/take_request.lua sha256=aafe219e17152b8f
//    Candidate TAKE: the fence, then the request is deleted and run (code 1), or gone (2).
//! models: periodic/request.lua sha256=61b2ef17e09311a4
//    Operator REQUEST: one "run now" request queued (no expiry modelled).
//
// The scheduler (core/periodic/scheduler.py) is modelled step by step: FENCE (fence():
// the term and token it believes it leads, no round trip), LOAD (_load: HGET last_slot
// once per term), CLAIM, TAKE; a pause may fall between any two, and the fence taken before
// a pause is used after it (the claim in flight). Belief in leading (is_leader by the
// local clock) is not relied upon: a leader resumed from a pause may or may not have
// stepped down; only the scripts' fences are trusted.
//
// Abstractions: 2 candidates, one job with slots 0..2 (the wall clock, shared by the
// candidates, reaches slot 2), one "run now" request; tokens are unique numbers; the
// lease is abstract: a record expires only while its holder is paused or dead, or when
// nobody renews it (its holder does not know it holds it: a lost reply, a step-down);
// a live leader renews before its renew deadline. Faults: one SIGSTOP of a candidate (any
// length), one SIGKILL, one restart of Redis without its data (record, term key, job state
// and requests lost), one lost campaign reply. Restarts with data change nothing here.
//
// Properties:
//   safety  terms strictly increase: every election's term is above every term issued
//           before, across data loss; leaders act in term order: every successful claim
//           (slot or request) is made with the record's current token and term, and its
//           term is >= the term of every earlier action (one term = one leader); each slot
//           runs at most once across failovers and data loss; the request runs at most once.
//   due     (ltl, weak fairness) the last slot is eventually claimed (run, or skipped as
//           the coalesce and new-job rules say) while a candidate lives.
//
//! check: safety
//! check: ltl due
//! mutant: CLAIM_NO_FENCE expect: safety
//! mutant: TERM_NO_FLOOR expect: safety
//! mutant: LEASE_FOREVER expect: due
//! spin: -DCOLLAPSE -DNFAIR=3
//
//   CLAIM_NO_FENCE  claim.lua and take_request.lua do not compare the caller's token and
//                   term with the record's.
//   TERM_NO_FLOOR   the term is INCR of the term key: no server clock, no ARGV[6] floor
//                   (restarts at 1 when Redis loses its data).
//   LEASE_FOREVER   the record is written without PEXPIRE: a dead leader's record stays.

#define NC 2
#define NS 2          /* the last slot */
#define NONE 255

/* Redis */
byte r_holder = NONE; /* record: identity (ghost), token (0: no record), term */
byte r_tok;
byte r_term;
byte tkey;            /* term key: last term issued (0: missing) */
byte srv_now = 1;         /* server clock (abstract microseconds) */
byte job_last = NONE; /* job state: last_slot (NONE: no state) */
bool req;             /* a "run now" request is pending */
byte wall;            /* the candidates' wall clock: the latest due slot */

/* ghosts */
byte ntok;
byte maxterm;
byte runs[NS + 1];
byte req_runs;
byte acted_term;
byte acted_by = NONE;
bool handled_last;    /* slot NS was claimed (run or skip) */
bool paused[NC];
bool crashed[NC];
byte leads[NC];       /* the token each candidate renews (0: none): a record holding another
                         token of its holder is renewed by nobody and expires */
byte pause_budget = 1;
byte crash_budget = 1;
byte loss_budget = 1;
byte lost_budget = 1;
byte request_budget = 1;

/* an action under term t by candidate c: terms never go down, one term one leader */
inline acted(c, t) {
  assert(r_tok == ftok && r_term == t);
  assert(t >= acted_term);
  assert(t != acted_term || acted_by == c);
  acted_term = t; acted_by = c
}

proctype Candidate(byte c) {
  byte lt, ltok;        /* the term we lead and its token (0: none) */
  byte stale;           /* a token the record may still hold from our past (0: none) */
  byte seen;            /* highest term seen */
  byte fresh, t;
  byte fterm, ftok;     /* the fence the scheduler's tick took (0: none) */
  byte sterm;           /* the term our cached last_slot belongs to (0: none) */
  byte clast = NONE;    /* cached last_slot */
  byte slot;
  bool ticking;         /* 0: campaign next; 1: the scheduler's tick (after a campaign) */

  do
  :: atomic { crash_budget > 0 && !paused[c] -> crash_budget--; crashed[c] = 1 }; break

  :: atomic { pause_budget > 0 && !paused[c] -> pause_budget--; paused[c] = 1 }
  :: atomic {
       paused[c] -> paused[c] = 0;
       if                                       /* is_leader() may have turned False */
       :: lt != 0 -> stale = ltok; lt = 0; ltok = 0; leads[c] = 0
       :: true
       fi
     }

  /* CAMPAIGN: campaign.lua, then LeaderElection._round */
  :: atomic {
       !paused[c] && !ticking ->
       fresh = ntok + 1; ticking = 1;   /* a new random token (numbered when used) */
       if
       :: r_tok != 0 && ltok != 0 && r_tok == ltok -> t = r_term   /* renewed */
       :: r_tok != 0 && !(ltok != 0 && r_tok == ltok) && r_tok != stale ->
          t = r_term;                                                /* another leads */
          if
          :: lost_budget > 0 -> lost_budget--; if :: lt == 0 -> stale = fresh; ntok = fresh :: else fi
          :: else ->
             if :: t > seen -> seen = t :: else fi;
             if :: lt != 0 -> stale = ltok :: else fi;               /* _step_down */
             lt = 0; ltok = 0; stale = 0; leads[c] = 0
          fi;
          goto done
       :: else ->                                                    /* elected */
          srv_now++;
#ifdef TERM_NO_FLOOR
          t = tkey + 1;
#else
          if :: tkey + 1 > srv_now -> t = tkey + 1 :: else -> t = srv_now fi;
          if :: t <= seen -> t = seen + 1 :: else fi;
#endif
          tkey = t;
          assert(t > maxterm);
          maxterm = t;
          r_holder = c; r_tok = fresh; r_term = t; ntok = fresh
       fi;
       if
       :: lost_budget > 0 -> lost_budget--; if :: lt == 0 -> stale = fresh :: else fi
       :: else ->
          if :: t > seen -> seen = t :: else fi;
          if
          :: r_tok == fresh -> lt = t; ltok = fresh; stale = 0; leads[c] = fresh   /* code 2 */
          :: else                                                   /* code 1: renewed */
          fi
       fi;
done:  fresh = 0; t = 0
     }

  /* FENCE: the scheduler's tick starts: fence() */
  :: atomic { !paused[c] && ticking && fterm == 0 -> if :: lt != 0 -> fterm = lt; ftok = ltok :: else -> ticking = 0 fi }

  /* LOAD: _load, once per term: HGET last_slot */
  :: atomic { !paused[c] && fterm != 0 && sterm != fterm -> clast = job_last; sterm = fterm }

  /* CLAIM: claim.lua with the fence taken (mode skip for a job without state, else run) */
  :: atomic {
       !paused[c] && fterm != 0 && sterm == fterm && (clast == NONE || clast < wall) ->
       slot = wall;
#ifndef CLAIM_NO_FENCE
       if
       :: r_tok != ftok || r_term != fterm -> sterm = 0; fterm = 0; ftok = 0; ticking = 0; goto claimed  /* code 0 */
       :: else
       fi;
#endif
       if
       :: job_last != NONE && slot <= job_last -> clast = job_last               /* code 2 */
       :: else ->
          acted(c, fterm);
          job_last = slot;
          if
          :: clast != NONE -> runs[slot]++; assert(runs[slot] <= 1)              /* run */
          :: else                                                               /* skip */
          fi;
          clast = slot;
          if :: slot == NS -> handled_last = 1 :: else fi
       fi;
claimed: slot = 0
     }

  /* TAKE: take_request.lua with the fence taken */
  :: atomic {
       !paused[c] && fterm != 0 && sterm == fterm && !(clast == NONE || clast < wall) && req ->
#ifndef CLAIM_NO_FENCE
       if
       :: r_tok != ftok || r_term != fterm -> sterm = 0; fterm = 0; ftok = 0; ticking = 0; goto taken   /* code 0 */
       :: else
       fi;
#endif
       acted(c, fterm);
       req = 0; req_runs++; assert(req_runs <= 1);
taken: skip
     }

  /* the tick ends (nothing left to claim) */
  :: atomic { !paused[c] && fterm != 0 && sterm == fterm && !(clast == NONE || clast < wall) && !req ->
              fterm = 0; ftok = 0; ticking = 0 }
  od
}

/* Time and Redis: the wall clock, lease expiry, a restart without data, a request. */
proctype World() {
  do
  :: atomic { wall < NS -> wall++ }
#ifndef LEASE_FOREVER
  :: atomic { r_tok != 0 && (paused[r_holder] || crashed[r_holder] || leads[r_holder] != r_tok) ->
              r_tok = 0; r_term = 0; r_holder = NONE }
#endif
  :: atomic { loss_budget > 0 -> loss_budget--; r_tok = 0; r_term = 0; r_holder = NONE; tkey = 0;
              job_last = NONE; req = 0 }
  :: atomic { request_budget > 0 -> request_budget--; req = 1 }
  od
}

init {
  atomic { run Candidate(0); run Candidate(1); run World() }
}

ltl due { <> handled_last }
