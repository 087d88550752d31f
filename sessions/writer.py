"""Appending records to a session file: each one written whole, then fsynced, then returned.

Inside `SessionWriter.group_commit` (one agent step) records are still written whole as they
come, so each survives ``kill -9`` of the agent the moment its append returns; the fsync that
makes them survive a power cut is issued for all of them when the group ends, on a
background thread (`PacedSync`): it overlaps the next model request instead of delaying it
(0.3–11 ms a step on the shared disk we measured on), and groups that come faster than
`SYNC_INTERVAL` share one. An answer's token usage, which arrives just before the answer,
is saved in the answer's own line (`append_usage`).
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from providers.events import Event
from providers.messages import Message, Usage
from sessions.errors import SessionError
from sessions.files import DEFAULT_HASH_LIMIT, PathResolver, TouchedFiles
from sessions.images import ImageFiles
from sessions.lock import SessionLock
from sessions.records import (
    MAX_DEPTH,
    MAX_LINE_BYTES,
    CheckpointRecord,
    CompactionRecord,
    EventRecord,
    MessageRecord,
    ModelSwitchRecord,
    RecordBase,
    SeenFile,
    TurnEndRecord,
    TurnStatus,
    UsageRecord,
    too_deep,
)
from sessions.redact import Redactor
from sessions.storage import storage_error, write_all
from sessions.syncer import SYNC_INTERVAL, PacedSync


class SessionWriter:
    """The open end of one session file. Made by `SessionStore.create` or `SessionStore.open`.

    Every ``append_*`` returns only after the record is written whole and fsynced, so a record
    that was acknowledged survives a crash or power cut; inside `group_commit` the fsync
    starts in the background at the end of the group, or an interval after the last one. A
    failed append leaves the file as it was and raises `SessionError`. Secrets are redacted
    before anything reaches the disk. Holds the session's lock until `close`; usable as a
    context manager.
    """

    def __init__(
        self,
        *,
        session_id: str,
        path: Path,
        fd: int,
        lock: SessionLock,
        cwd: Path,
        clock: Callable[[], float],
        redactor: Redactor,
        fsync: bool = True,
        hash_limit: int = DEFAULT_HASH_LIMIT,
        sync_interval: float = SYNC_INTERVAL,
        resolve_path: PathResolver | None = None,
        images: ImageFiles | None = None,
    ) -> None:
        self.id = session_id
        self._images = images
        self.path = path
        self._fd: int | None = fd
        self._lock = lock
        self._cwd = cwd
        self._clock = clock
        self._redactor = redactor
        self._fsync = fsync
        self._files = TouchedFiles(cwd.resolve(), resolve_path, hash_limit)
        self._size = os.fstat(fd).st_size
        self._mutex = threading.Lock()
        self._groups = 0
        """How many `group_commit` blocks are open; while any is, fsyncs wait for the last."""
        self._unsynced = False
        self._sync_interval = sync_interval
        self._paced: PacedSync | None = None
        """fsyncs the groups' records in the background, made on the first group's end."""
        self._other_syncs = 0
        """fsyncs not counted by ``_paced``: inline ones, and those of a closed `PacedSync`."""
        self._held_usage: UsageRecord | None = None
        """Usage told inside a group, waiting to be saved with the answer that follows."""
        self.failure: SessionError | None = None
        """The first write or fsync that failed: from there on the file may lack records."""
        self.unsaved = 0
        """Records that could not be written (each failed append raised, too)."""
        self.unsynced_failure = False
        """An fsync failed: records written may not survive a power cut."""

    @property
    def syncs(self) -> int:
        """fsyncs started so far (what group commit saves; benchmarks report it)."""
        paced = self._paced.issued if self._paced is not None else 0
        return self._other_syncs + paced

    @property
    def closed(self) -> bool:
        """Whether `close` was called."""
        return self._fd is None

    def append_message(self, message: Message) -> None:
        """Save one conversation message; tool results carry the state of the files their
        calls touched. Its images are saved first, as files the record names
        (`sessions.images`)."""
        if self._images is not None and message.images:
            self._images.keep([message])
        usage = self._take_held_usage() if message.role == "assistant" else None
        self._files.called(message)
        record = MessageRecord(
            ts=self._clock(),
            message=message,
            usage=usage.usage if usage is not None else None,
            model=usage.model if usage is not None else None,
            kind=usage.kind if usage is not None else None,
            files=self._files.answered(message),
        )
        self.append_record(record)

    def note_seen(self, tool_use_id: str, seen: SeenFile) -> None:
        """The file the call ``tool_use_id`` read whole, as its tool read it: saved with the
        call's result as the file's state, rather than the file as it is then."""
        self._files.noted(tool_use_id, seen)

    def append_event(self, event: Event) -> None:
        """Save an event; the signature fits `EventBus.subscribe`."""
        self.append_record(EventRecord(ts=self._clock(), event=event.model_dump(mode="json")))

    def append_compaction(
        self, messages: list[Message], stats: Mapping[str, Any] | None = None
    ) -> None:
        """Save the compacted conversation that replaces the view from here on."""
        if self._images is not None:
            self._images.keep(messages)
        record = CompactionRecord(ts=self._clock(), messages=messages, stats=dict(stats or {}))
        self.append_record(record)

    def append_model_switch(
        self, model: str, *, sticky: bool, reason: str = "", chain: list[str] | None = None
    ) -> None:
        """Save a change of model (``sticky`` for a fallback that holds for the session)."""
        record = ModelSwitchRecord(
            ts=self._clock(), model=model, sticky=sticky, reason=reason, chain=chain
        )
        self.append_record(record)

    def append_usage(self, usage: Usage, model: str = "", kind: str = "turn") -> None:
        """Save the token usage of one response, and what its request was for.

        Inside `group_commit` it is held for the model's message that follows and saved in
        that message's line: a step writes one line less. Anything else appended first, the
        group's end and `close` save it on a line of its own (the usage of an answer that is
        not saved: a summary, a truncated answer asked again). Either way it is lost only
        with its answer, when the agent is killed before the answer is saved.
        """
        record = UsageRecord(ts=self._clock(), usage=usage, model=model, kind=kind)
        if not self._groups:
            self.append_record(record)
            return
        self._save_held_usage()  # an earlier answer's, whose message never came
        self._held_usage = record

    def append_checkpoint(
        self,
        path: Path,
        *,
        existed_before: bool,
        content_hash: str | None,
        turn: int,
        backup: Path | None = None,
    ) -> None:
        """Save what a file looked like before a write (sha256 hex ``content_hash``)."""
        absolute = path if path.is_absolute() else self._cwd / path
        record = CheckpointRecord(
            ts=self._clock(),
            path=str(absolute),
            existed_before=existed_before,
            content_hash=content_hash,
            turn=turn,
            backup=str(backup) if backup is not None else None,
        )
        self.append_record(record)

    def append_turn_end(self, status: TurnStatus | str, error: str | None = None) -> None:
        """Save how a turn ended (a `TurnStatus`, or its value).

        Raises:
            ValueError: ``status`` is no `TurnStatus`.
        """
        try:
            ending = TurnStatus(status)
        except ValueError:
            allowed = ", ".join(TurnStatus)
            raise ValueError(f"turn status {status!r} must be one of {allowed}") from None
        self.append_record(TurnEndRecord(ts=self._clock(), status=ending, error=error))

    @contextlib.contextmanager
    def group_commit(self) -> Iterator[None]:
        """Make every record appended inside durable with one fsync, started when it ends.

        Each append is still written to the file before it returns, so the agent being
        killed loses nothing acknowledged; only a power cut before that fsync finishes can.
        The fsync runs in the background and never delays the next group: when the last one
        started less than ``sync_interval`` ago, it starts at that interval, for every group
        written meanwhile, so a power cut takes at most that much. `close` syncs what is
        left. The agent wraps each step (model answer, usage, tool results, file states,
        events) in one. Blocks nest; the outermost syncs.

        Raises:
            SessionError: the previous group's fsync failed (unless the block is already
                raising).
        """
        with self._mutex:
            self._groups += 1
        failed = False
        try:
            yield
        except BaseException:
            failed = True
            raise
        finally:
            error: SessionError | None = None
            if self._groups == 1:  # the outermost: usage no answer carried is saved in it
                try:
                    self._save_held_usage()
                except SessionError as lost:
                    error = lost
            with self._mutex:
                self._groups -= 1
                if self._groups == 0:
                    try:
                        self._sync_in_background()
                    except SessionError as unsynced:
                        error = error or unsynced
            if error is not None and not failed:  # never hide the error already on its way
                raise error

    def close(self) -> None:
        """Make pending records durable, close the file and release the lock (safe twice)."""
        with contextlib.suppress(SessionError):  # noted in `failure`; the lock must go
            self._save_held_usage()
        with self._mutex:
            if self._fd is not None:
                with contextlib.suppress(SessionError):  # closing must release the lock
                    self._sync_pending()
                fd, self._fd = self._fd, None
                os.close(fd)
            self._lock.release()

    def discard(self) -> None:
        """Close the session and delete its file and lock file.

        For a session in which no turn ran: listing it would only add a "0 msgs" row that
        nobody can continue. Deleting while still holding the lock keeps another process
        from opening it in between.
        """
        with self._mutex:
            if self._fd is not None:
                with contextlib.suppress(OSError):
                    self.path.unlink()
                    self._lock.path.unlink()
        self.close()

    def __enter__(self) -> SessionWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def append_record(self, record: RecordBase) -> None:
        """Save any record (the typed ``append_*`` methods are the usual way).

        Raises:
            SessionError: it cannot be written, or it is too large or too deeply nested to be
                read back (`parse_record` would reject it).
        """
        self._save_held_usage()
        line = record.model_dump_json()
        if self._redactor.contains_secret(line):
            line = json.dumps(
                self._redactor.value(json.loads(line)), ensure_ascii=False, separators=(",", ":")
            )
        # Checked in bytes, as the reader checks it: a line of many multibyte characters
        # must not be written only to be refused when the session is read back.
        data = line.encode("utf-8")
        if len(data) > MAX_LINE_BYTES or too_deep(data):
            raise self._lost(
                SessionError(
                    f"cannot save a {getattr(record, 'type', 'record')} record to session "
                    f"{self.id}: it is larger than {MAX_LINE_BYTES} bytes or nested more than "
                    f"{MAX_DEPTH} levels"
                )
            )
        self._write(data + b"\n")

    def _take_held_usage(self) -> UsageRecord | None:
        with self._mutex:
            held, self._held_usage = self._held_usage, None
        return held

    def _save_held_usage(self) -> None:
        if self._held_usage is not None and (held := self._take_held_usage()) is not None:
            self.append_record(held)

    def _write(self, payload: bytes) -> None:
        with self._mutex:
            if self._fd is None:
                raise SessionError(f"session {self.id} is closed; open it again to continue")
            try:
                write_all(self._fd, payload)
                if self._fsync and not self._groups:
                    self._sync()
            except OSError as exc:
                self._undo_partial_write()
                raise self._lost(storage_error("save to session file", self.path, exc)) from exc
            self._size += len(payload)
            self._unsynced = self._fsync and self._groups > 0

    def _sync_pending(self) -> None:
        # Called with the mutex held.
        try:
            if self._paced is not None:
                paced, self._paced = self._paced, None
                try:
                    paced.close()
                finally:
                    self._other_syncs += paced.issued
            if self._unsynced and self._fd is not None:
                self._sync()
        except OSError as exc:
            raise self._not_synced(storage_error("save to session file", self.path, exc)) from exc
        self._unsynced = False

    def _sync_in_background(self) -> None:
        # Called with the mutex held. fsync releases the GIL, so the loop goes on meanwhile.
        if not self._unsynced or self._fd is None:
            return
        if self._paced is None:
            self._paced = PacedSync(self._fd, self._sync_interval)
        self._unsynced = False
        try:
            self._paced.request()
        except OSError as exc:  # the previous group's fsync
            raise self._not_synced(storage_error("save to session file", self.path, exc)) from exc

    def _lost(self, error: SessionError) -> SessionError:
        """Note a record that is not in the file (for the person's "not saved"); returns it."""
        self.unsaved += 1
        self.failure = self.failure or error
        return error

    def _not_synced(self, error: SessionError) -> SessionError:
        self.unsynced_failure = True
        self.failure = self.failure or error
        return error

    def _sync(self) -> None:
        assert self._fd is not None
        os.fsync(self._fd)
        self._other_syncs += 1

    def _undo_partial_write(self) -> None:
        # A half-written line would glue itself to the next record; cut it off.
        assert self._fd is not None
        with contextlib.suppress(OSError):
            os.ftruncate(self._fd, self._size)
