"""Running blocking file I/O off the event loop, in threads that a timeout may abandon.

`asyncio.to_thread` uses the loop's default executor, whose threads `asyncio.run` joins at
exit: one read stuck on a hung mount would then keep the agent from ever exiting. Each call
here gets its own daemon thread instead, so the executor's timeout can give up on it and the
process can still end.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


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

    def work() -> None:
        result: T | None = None
        error: BaseException | None = None
        try:
            result = context.run(fn, *args, **kwargs)
        except BaseException as exc:  # handed to the awaiting task, which decides
            error = exc
        with contextlib.suppress(RuntimeError):  # the loop closed while we worked
            loop.call_soon_threadsafe(settle, result, error)

    threading.Thread(
        target=work, name=f"agent-io-{getattr(fn, '__name__', 'call')}", daemon=True
    ).start()
    return await future
