"""Benchmarks: each prints ratios; see BENCHMARKS.md."""
