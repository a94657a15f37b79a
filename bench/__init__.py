"""Benchmarks: each prints figures and ratios; none asserts timings."""
