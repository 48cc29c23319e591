"""Pieces of the benchmark harnesses (bench/tcp_bench.py, and the peers of bench/wan_bench.py)."""
