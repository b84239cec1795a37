"""Benchmarks: each prints ratios measured in one run (against a roofline or a straightforward
baseline), never asserts wall time.
"""
