"""Helpers of the admin's tests."""

import threading

from django_redcoord.core.locks import Lock


def hold_from_a_thread_named(thread_name, lock_name, client, prefix="test"):
    """Take ``lock_name`` from a thread called ``thread_name`` (what the dashboard shows as the
    holder's thread: any text a process may choose); returns once it is held."""
    done = threading.Event()

    def hold():
        Lock(lock_name, ttl=60, wait=0, client=client, prefix=prefix).acquire()
        done.set()

    threading.Thread(target=hold, name=thread_name).start()
    assert done.wait(10)
