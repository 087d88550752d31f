"""How a configuration problem is told: in the words of the file, never of the code (and
reading a YAML file, whose every problem is told here).

A pydantic error names internal classes ("a valid dictionary or instance of
SandboxSettings"), and PyYAML's names the stream it read (``"<unicode string>"``). Both are
rewritten here into what the person typed and what they may write instead, with "did you
mean" for a key that is one typo away from a known one.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, get_args, get_origin

import yaml
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails


class ConfigError(Exception):
    """A configuration problem the person must fix; the message says where and how."""


def read_yaml(path: Path) -> dict[str, Any]:
    """The mapping in YAML file ``path`` (empty for an empty file).

    Raises:
        ConfigError: it cannot be read, is not YAML, or is not a mapping.
    """
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"config file {path} is not UTF-8 text (invalid byte at offset {exc.start}); "
            "save it as UTF-8"
        ) from None
    except RecursionError:
        raise ConfigError(f"config file {path} is nested too deeply to read") from None
    except yaml.YAMLError as exc:
        raise ConfigError(describe_yaml_error(path, exc)) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path} must be a mapping of keys to values, not {type(data).__name__}")
    return data


def describe_validation(
    exc: ValidationError,
    root: type[BaseModel],
    origin: Mapping[str, Path],
    overrides: Mapping[str, Any],
) -> str:
    """Every error in ``exc`` as one line: where it comes from, the key, what is wrong."""
    lines = []
    for error in exc.errors():
        loc = [str(part) for part in error["loc"]]
        key = ".".join(loc) or "(top level)"
        top = loc[0] if loc else ""
        if top in overrides:
            source = "command line"
        elif top in origin:
            source = str(origin[top])
        else:
            source = "configuration"
        lines.append(f"{source}: {key}: {_explain(error, root, loc)}")
    return "invalid configuration\n  " + "\n  ".join(lines)


def _explain(error: ErrorDetails, root: type[BaseModel], loc: list[str]) -> str:
    kind = error["type"]
    message = error["msg"].removeprefix("Value error, ")
    if kind == "extra_forbidden":
        allowed = allowed_keys(root, loc[:-1])
        close = difflib.get_close_matches(loc[-1], allowed, n=1, cutoff=0.6)
        hint = f"did you mean {close[0]!r}? " if close else ""
        return f"unknown key; {hint}allowed keys here: {', '.join(allowed)}"
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        keys = allowed_keys(root, loc)
        what = f"a mapping with keys such as {', '.join(keys)}" if keys else "a mapping"
        return f"got {_shown(error.get('input'))}: should be {what}"
    message = message.replace("Input should be", "should be")
    if "input" not in error or kind == "missing":
        return message
    value = error["input"]
    if isinstance(value, bool) and kind in ("enum", "literal_error"):
        # YAML 1.1 reads unquoted off/no/false (on/yes/true) as a boolean.
        return f"got {str(value).lower()} (YAML reads unquoted off/no as false): {message}"
    return f"got {_shown(value)}: {message}"


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _field_type(root: type[BaseModel], loc: list[str]) -> Any:
    """The annotation at ``loc`` below ``root``; None where the path leaves the models."""
    model: type[BaseModel] | None = root
    annotation: Any = None
    parts = list(loc)
    while parts and model is not None:
        field = model.model_fields.get(parts.pop(0))
        if field is None:
            return None
        annotation = field.annotation
        model = None
        if get_origin(annotation) is dict and parts:
            parts.pop(0)  # the entry's own name
            annotation = get_args(annotation)[1]
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            model = annotation
    return annotation


def allowed_keys(root: type[BaseModel], loc: list[str]) -> list[str]:
    """The keys allowed in the mapping at ``loc`` (e.g. ``["providers", "ollama"]``)."""
    if not loc:
        return sorted(root.model_fields)
    annotation = _field_type(root, loc)
    if get_origin(annotation) is dict:
        annotation = get_args(annotation)[1]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return sorted(annotation.model_fields)
    return []


def describe_yaml_error(path: Path, exc: yaml.YAMLError) -> str:
    """``exc`` naming ``path`` and its line and column, not PyYAML's ``<unicode string>``."""
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        where = f", line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        what = " ".join(part for part in (exc.context, exc.problem) if part)
        return f"{path} is not valid YAML{where}: {what or 'cannot be read'}"
    return f"{path} is not valid YAML: {exc}"
