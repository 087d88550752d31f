"""Recovery efficiency benchmark: the real `RecoveringProvider` and baseline retry policies,
simulated on virtual time against scripted provider faults (see BENCHMARKS.md)."""

__all__: list[str] = []
