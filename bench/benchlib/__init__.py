"""Pieces of the TCP benchmark harness (bench/tcp_bench.py)."""
