"""The performance benchmarks: one script per target, each printing its figures and ratios (``bench/run_all.py``)."""
