"""Running blocking file I/O off the event loop, in threads that a timeout may abandon.

`asyncio.to_thread` uses the loop's default executor, whose threads `asyncio.run` joins at
exit: one read stuck on a hung mount would then keep the agent from ever exiting. Calls here
run on daemon threads instead, so the executor's timeout can give up on one and the process
can still end. A thread that finished waits for the next call rather than exiting: starting
a thread per call cost up to a few milliseconds of every tool step on a busy machine. A call
never waits for a busy thread; with none idle, it gets a new one.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import queue
import threading
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")

Deliver = Callable[[], None]
Job = Callable[[], Deliver]
"""Does the work on a worker thread; returns what hands its outcome to the event loop."""

_jobs: queue.SimpleQueue[Job] = queue.SimpleQueue()
_idle = 0
"""Threads waiting on `_jobs`; a job is queued only when one of them is sure to take it."""
_idle_lock = threading.Lock()


def _submit(job: Job) -> None:
    global _idle
    with _idle_lock:
        if _idle:
            _idle -= 1
            _jobs.put(job)
            return
    threading.Thread(target=_serve, args=(job,), name="agent-io", daemon=True).start()


def _serve(job: Job) -> None:
    global _idle
    while True:
        deliver = job()
        with _idle_lock:  # idle before the caller hears back, so its next call comes here
            _idle += 1
        deliver()
        job = _jobs.get()


async def in_worker(fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
    """Run ``fn(*args, **kwargs)`` in a daemon thread and await its result.

    Cancelling the await (a timeout) returns at once; the thread finishes on its own and its
    result is dropped.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    context = contextvars.copy_context()

    def settle(result: T | None, error: BaseException | None) -> None:
        if future.done():  # abandoned after a timeout or cancellation
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)  # type: ignore[arg-type]

    def work() -> Deliver:
        # Named after the call, so a stuck thread says what it is stuck in.
        threading.current_thread().name = f"agent-io-{getattr(fn, '__name__', 'call')}"
        result: T | None = None
        error: BaseException | None = None
        try:
            result = context.run(fn, *args, **kwargs)
        except BaseException as exc:  # handed to the awaiting task, which decides
            error = exc

        def deliver() -> None:
            with contextlib.suppress(RuntimeError):  # the loop closed while we worked
                loop.call_soon_threadsafe(settle, result, error)

        return deliver

    _submit(work)
    return await future
