"""Text of tool results for the model: what happened, whether retrying helps, what to try."""

from __future__ import annotations

import errno
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from providers.conversation import RAW_ARGUMENTS_KEY
from providers.messages import MAX_INPUT_DEPTH, ToolUseBlock, input_depth
from tools.base import ErrorCategory, Tool
from tools.events import RolledBack
from tools.text import redact_value
from tools.undo.report import UndoReport
from tools.workspace import PathOutsideWorkspace

_TRANSIENT_ERRNOS = frozenset(
    {errno.EAGAIN, errno.EBUSY, errno.EINTR, errno.ETIMEDOUT, errno.ENFILE, errno.EMFILE}
)


@dataclass(frozen=True)
class Failure:
    """A failed attempt, already classified."""

    message: str
    category: ErrorCategory
    hint: str = ""


def classify_exception(exc: Exception) -> Failure:
    """A `Failure` for an exception a tool did not handle itself."""
    if isinstance(exc, PathOutsideWorkspace):
        return Failure(str(exc), ErrorCategory.PERMANENT, "use a path inside the workspace")
    if isinstance(exc, OSError):
        transient = exc.errno in _TRANSIENT_ERRNOS
        category = ErrorCategory.TRANSIENT if transient else ErrorCategory.PERMANENT
        where = f" ({exc.filename})" if exc.filename else ""
        return Failure(f"{exc.strerror or exc}{where}", category)
    return Failure(
        f"unexpected {type(exc).__name__}: {exc}",
        ErrorCategory.PERMANENT,
        "try different arguments or another tool",
    )


def error_text(failure: Failure, *, attempts: int = 1) -> str:
    """The model-facing text of a failed call."""
    lines = [f"Error: {failure.message}"]
    if failure.category is ErrorCategory.TRANSIENT:
        tried = f" (tried {attempts} times)" if attempts > 1 else ""
        lines.append(f"This looks temporary{tried}; retrying later may help.")
    else:
        lines.append("Retrying the same call will not help.")
    if failure.hint:
        lines.append(f"Try: {failure.hint}.")
    return "\n".join(lines)


def rollback_text(report: UndoReport) -> str:
    """What a rollback after a failed call did, including restores that failed."""
    lines = []
    if report.restored:
        names = ", ".join(p.name for p in report.restored)
        lines.append(f"Changes this call made were rolled back: {names}.")
    for failure in report.failed:
        lines.append(
            f"ROLLBACK FAILED for {failure.path} ({failure.reason}): the file may be half "
            "changed; inspect it with read_file before continuing."
        )
    return "\n".join(lines)


def rolled_back(call: ToolUseBlock, report: UndoReport) -> RolledBack:
    """The event for a failed call's rollback (`rollback_text` says it to the model)."""
    return RolledBack(
        tool=call.name,
        tool_use_id=call.id,
        restored=[str(p) for p in report.restored],
        failed=[f"{f.path}: {f.reason}" for f in report.failed],
    )


def parse_arguments(
    tool: Tool[Any], arguments: dict[str, Any], redact: Callable[[str], str]
) -> BaseModel | str:
    """The call's arguments as ``tool``'s input model, or the error text for the model:
    nested too deeply, not JSON at all, or not what the tool takes.

    The texts quote the arguments cut short, so they quote them redacted.
    """
    if input_depth(arguments) > MAX_INPUT_DEPTH:
        return (
            f"Error: the arguments for {tool.name} are nested more than {MAX_INPUT_DEPTH} "
            f"levels deep. Send one flat JSON object with these fields: "
            f"{expected_fields(tool.input_model)}."
        )
    shown = redact_value(arguments, redact)
    if RAW_ARGUMENTS_KEY in arguments:
        return not_json_text(tool.name, shown[RAW_ARGUMENTS_KEY], tool.input_model)
    try:
        return tool.input_model.model_validate(arguments)
    except ValidationError as exc:
        return validation_text(tool.name, _quotable(exc, tool, shown), tool.input_model)


def _quotable(exc: ValidationError, tool: Tool[Any], shown: Any) -> ValidationError:
    """The same validation errors, found in the redacted arguments ``shown``."""
    try:
        tool.input_model.model_validate(shown)
    except ValidationError as redacted:
        return redacted
    return exc


def validation_text(tool: str, exc: ValidationError, model: type[BaseModel]) -> str:
    """Which fields were wrong and what the schema expects, for the model."""
    lines = [f"Error: invalid arguments for {tool}:"]
    for error in exc.errors():
        field = ".".join(str(part) for part in error["loc"]) or "(arguments)"
        got = "" if error["type"] == "missing" else f" (got {_short(error.get('input'))})"
        lines.append(f"- {field}: {error['msg']}{got}")
    lines.append(f"Expected arguments: {expected_fields(model)}.")
    lines.append("Fix the arguments and call the tool again.")
    return "\n".join(lines)


def not_json_text(tool: str, raw: Any, model: type[BaseModel]) -> str:
    """The arguments were not a JSON object: say where parsing failed and what is expected."""
    try:
        json.loads(str(raw))
        problem = "a JSON value, but not an object"
    except ValueError as exc:
        problem = f"not valid JSON ({exc})"
    return (
        f"Error: the arguments for {tool} are {problem}: {_short(raw)}\n"
        f"Send one JSON object with these fields: {expected_fields(model)}."
    )


def expected_fields(model: type[BaseModel]) -> str:
    """E.g. ``path (string, required), offset (integer)``."""
    schema = model.model_json_schema()
    required = set(schema.get("required", []))
    parts = []
    for name, prop in schema.get("properties", {}).items():
        kind = prop.get("type") or "/".join(
            str(option.get("type")) for option in prop.get("anyOf", []) if "type" in option
        )
        parts.append(f"{name} ({kind}{', required' if name in required else ''})")
    return ", ".join(parts) or "none"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
