"""The dashboard's actions, registered once each: what it does, what it costs, how it runs.

Each :class:`Action` names its URL slug, the sentence the confirmation page and
the admin's history show, its consequence, the parameters it takes beyond the
name, the page to go back to, and the function that does it. The admin's
confirm-then-POST view (:mod:`.site`) takes every action from :data:`ACTIONS`
through the same steps; so adding one is one function and one
:func:`register_action`, and the dashboard's links and ``redcoord`` commands of
a new family reach it the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from django.conf import settings


@dataclass(frozen=True)
class Call:
    """One action's parameters, validated (``by``: the user's name, for the record)."""

    name: str
    fence: int | None = None
    key: str | None = None
    id: str | None = None
    election: str | None = None
    by: str = ""


@dataclass(frozen=True)
class Action:
    """An action of the dashboard."""

    #: The URL slug: ``<dashboard>/action/<slug>/?name=...``.
    slug: str
    #: What it does, with ``{name}``, ``{fence}``, ``{key}``, ``{id}``, ``{election}``.
    describe: str
    #: What follows from it, on the confirmation page.
    consequence: str
    #: ``run(call)``: do it; the outcome in words. Raises RedcoordError, TypeError or ValueError
    #: (shown as "Not done: ...").
    run: Callable[[Call], str]
    #: The parameters it takes beyond ``name``: ``fence`` (a number), ``key``, ``id``, ``election``.
    needs: tuple[str, ...] = ()
    #: The page to go back to: the dashboard, the queue's dead letters, the task's result.
    back: Literal["home", "dead_letters", "task_result"] = "home"
    #: On a periodic job: its name is part of its state key, so no ``{tag}`` in it.
    job: bool = False
    #: What ``id`` is, in words (for an error about it).
    id_label: str = "message id"


#: slug -> action, in the order registered.
ACTIONS: dict[str, Action] = {}


def register_action(action: Action) -> Action:
    """Add ``action`` (under its slug; again: replaced). Raises ValueError for a parameter it
    cannot take."""
    unknown = set(action.needs) - {"fence", "key", "id", "election"}
    if unknown:
        raise ValueError(
            f"action {action.slug!r} needs {sorted(unknown)}; the parameters an action may take "
            "are fence, key, id and election"
        )
    ACTIONS[action.slug] = action
    return action


def _force_release(call: Call) -> str:
    from ..core import force_release

    return force_release(call.name, call.fence or 0)


register_action(
    Action(
        "force-release",
        "Force-release lock {name} (fencing token {fence})",
        (
            "The holder keeps running but its lock is gone: its next release or extend "
            "raises LockLost. The oldest waiter, if any, gets the lock now. Nothing "
            "happens if the lock has changed hands since you looked."
        ),
        run=_force_release,
        needs=("fence",),
    )
)


def _revoke_permit(call: Call) -> str:
    from ..core import revoke_permit

    return revoke_permit(call.name, call.fence or 0)


register_action(
    Action(
        "revoke-permit",
        "Revoke the permit of semaphore {name} with fencing token {fence}",
        (
            "Its holder keeps running but its permit is gone: its next release or extend "
            "raises LockLost. The oldest waiter, if any, gets the permit now. Nothing "
            "happens if that grant has ended since you looked."
        ),
        run=_revoke_permit,
        needs=("fence",),
    )
)


def _reset_ratelimit(call: Call) -> str:
    from ..core import reset_key

    try:
        return f"{reset_key(call.name, call.key or '')} key(s) deleted"
    except ValueError as exc:
        return f"nothing done: {exc}"


register_action(
    Action(
        "reset-ratelimit",
        "Reset what key {key} counted in rate limit {name}",
        (
            "The key's counts are forgotten: its next requests pass as if it had made "
            "none (up to the policy's burst). Other keys are not touched."
        ),
        run=_reset_ratelimit,
        needs=("key",),
    )
)


def _requeue_dead(call: Call) -> str:
    from ..core import Queue

    return f"{Queue(call.name).requeue_dead(limit=100_000)} message(s) requeued"


register_action(
    Action(
        "requeue-dead",
        "Requeue the dead letters of queue {name}",
        (
            "The dead letters go back to the ready queue with their attempts reset; "
            "workers will run them again."
        ),
        run=_requeue_dead,
        back="dead_letters",
    )
)


def _purge_dead(call: Call) -> str:
    from ..core import Queue
    from ..dashboard import purge_dead_letters

    return f"{purge_dead_letters(Queue(call.name))} dead letter(s) deleted"


register_action(
    Action(
        "purge-dead",
        "Delete the dead letters of queue {name}",
        "The dead letters and their errors are deleted for good.",
        run=_purge_dead,
        back="dead_letters",
    )
)


def _purge_queue(call: Call) -> str:
    from ..core import Queue

    dropped = Queue(call.name).purge()
    return f"queue purged: {dropped} waiting message{'' if dropped == 1 else 's'} dropped"


register_action(
    Action(
        "purge-queue",
        "Delete every ready and delayed message of queue {name}",
        (
            "Every message waiting in the queue (ready or delayed) is deleted for good. "
            "Messages being processed and dead letters stay."
        ),
        run=_purge_queue,
    )
)


def _pause_queue(call: Call) -> str:
    from ..core import Queue

    paused = Queue(call.name).pause(f"paused in the admin by {call.by}"[:500])
    return "paused" if paused else "it was paused already"


register_action(
    Action(
        "pause-queue",
        "Pause queue {name}",
        (
            "Its workers claim nothing new from it until it is resumed. Pushes go on and "
            "wait in it; jobs a worker already claimed finish (each worker thread may "
            "hold up to WORKER_PREFETCH claimed messages). The pause lasts across worker "
            "restarts; the dashboard shows it."
        ),
        run=_pause_queue,
    )
)


def _resume_queue(call: Call) -> str:
    from ..core import Queue

    return "resumed" if Queue(call.name).resume() else "it was not paused"


register_action(
    Action(
        "resume-queue",
        "Resume queue {name}",
        "Its workers claim from it again at once, in the usual order.",
        run=_resume_queue,
    )
)


_GONE = "0: it is no longer a dead letter (requeued, deleted or dropped since)"


def _requeue_dead_letter(call: Call) -> str:
    from ..core import Queue

    if Queue(call.name).requeue_dead_letter(call.id or ""):
        return "1 message requeued"
    return f"{_GONE}, nothing requeued"


register_action(
    Action(
        "requeue-dead-letter",
        "Requeue dead letter {id} of queue {name}",
        (
            "The message goes back to the ready queue with its attempts reset, and its "
            "error is forgotten; a worker will run it again. Nothing happens if it is no "
            "longer a dead letter."
        ),
        run=_requeue_dead_letter,
        needs=("id",),
        back="dead_letters",
    )
)


def _delete_dead_letter(call: Call) -> str:
    from ..core import Queue

    if Queue(call.name).delete_dead_letter(call.id or ""):
        return "1 dead letter deleted"
    return f"{_GONE}, nothing deleted"


register_action(
    Action(
        "delete-dead-letter",
        "Delete dead letter {id} of queue {name}",
        (
            "The message and its error are deleted for good (a task's result record stays"
            " until RESULT_TTL). Nothing happens if it is no longer a dead letter."
        ),
        run=_delete_dead_letter,
        needs=("id",),
        back="dead_letters",
    )
)


def _leader(call: Call) -> Any:
    from ..core import LeaderElection

    return LeaderElection(call.election or "default")  # its client and keys: it does not campaign


def _known_job(call: Call) -> None:
    """Refuse a job this project does not have: registered here (discovered as run_leader finds
    them) or with state in Redis (a leader ran it). A request for another name would be queued
    and dropped by the leader, the action reported done."""
    from ..core import read_job_states
    from ..dashboard import _registered_jobs

    jobs = _registered_jobs()
    if call.name in jobs or read_job_states(_leader(call), [call.name]).get(call.name):
        return
    raise ValueError(
        f"no periodic job named {call.name!r}; registered jobs: {', '.join(sorted(jobs)) or 'none'}"
    )


def _run_job(call: Call) -> str:
    from ..core import request_run

    _known_job(call)
    return (
        f"request {request_run(_leader(call), call.name, by=call.by or None)} queued for the leader"
    )


register_action(
    Action(
        "run-job",
        "Ask the leader of election {election} to run periodic job {name} now",
        (
            "The current leader runs the job once, under its term, at its next check "
            "(within its retry period); the schedule does not move. If no leader claims "
            "the request within 5 minutes it is dropped."
        ),
        run=_run_job,
        needs=("election",),
        job=True,
    )
)


def _pause_job(call: Call) -> str:
    from ..core import pause_job

    _known_job(call)
    return "paused" if pause_job(_leader(call), call.name) else "it was paused already"


register_action(
    Action(
        "pause-job",
        "Pause periodic job {name} of election {election}",
        (
            "The leader skips the job's slots (counted as missed) until it is resumed. A "
            "run already going on is not stopped; Run now still works."
        ),
        run=_pause_job,
        needs=("election",),
        job=True,
    )
)


def _resume_job(call: Call) -> str:
    from ..core import resume_job

    return "resumed" if resume_job(_leader(call), call.name) else "it was not paused"


register_action(
    Action(
        "resume-job",
        "Resume periodic job {name} of election {election}",
        (
            "The job runs again from its next slot; the slots skipped while paused are "
            "not caught up."
        ),
        run=_resume_job,
        needs=("election",),
        job=True,
    )
)


def _cancel_task(call: Call) -> str:
    from ..tasks.backend import task_backends_for
    from ..tasks.cancel import Cancel
    from ..tasks.compat import TaskResultDoesNotExist

    if call.name not in our_task_backends():
        raise ValueError(f"no Redis Tasks backend {call.name!r} in TASKS")
    try:
        outcome = task_backends_for(call.name).cancel(call.id or "")
    except TaskResultDoesNotExist:
        raise ValueError(f"no task result {call.id!r} (it may have expired)") from None
    return {
        Cancel.REMOVED: "taken out of its queue; it will not run",
        Cancel.REQUESTED: "a worker holds it; it was told to stop, and its outcome will be dropped",
        Cancel.FINISHED: "it had finished already; nothing changed",
    }[outcome]


register_action(
    Action(
        "cancel-task",
        "Cancel task {id} of Tasks backend {name}",
        (
            "A task still waiting in its queue is taken out and never runs. One a worker "
            "already holds is told: an async task gets CancelledError, a sync task sees "
            "context.cancelled(), and one still running CANCEL_GRACE seconds later is "
            "abandoned (its worker exits to be restarted). Either way the result reads "
            "FAILED with a TaskCancelled error at once, and whatever the attempt still "
            "reports is dropped. Nothing happens if the task has finished."
        ),
        run=_cancel_task,
        needs=("id",),
        back="task_result",
        id_label="result id",
    )
)


def our_task_backends() -> list[str]:
    """Aliases of TASKS whose backend is ours (the others keep no results in our Redis)."""
    from django.utils.module_loading import import_string

    from ..tasks.backend import RedisTaskBackend

    aliases = []
    for alias, config in (getattr(settings, "TASKS", None) or {}).items():
        try:
            backend = import_string(config["BACKEND"])
        except (ImportError, KeyError, TypeError):
            continue  # Django's own check reports it
        if isinstance(backend, type) and issubclass(backend, RedisTaskBackend):
            aliases.append(alias)
    return aliases
