"""Medians over the reps, the ratios against the limits measured in the same
run, the goals, and the markdown table."""

import statistics
from dataclasses import dataclass

from .measure import Sample
from .tests import Test

GB = 1e9


@dataclass
class Row:
    test: Test
    samples: list[Sample]

    @property
    def good(self) -> list[Sample]:
        return [s for s in self.samples if not s.error]

    def rates(self) -> list[float]:
        return [s.extra.get("rate", s.bytes / s.wall) / GB for s in self.good]

    def gbps(self) -> float | None:
        r = self.rates()
        return statistics.median(r) if r else None

    def files_per_s(self) -> list[float]:
        return [s.files / s.wall for s in self.good]

    def per_gb(self, attr: str) -> float | None:
        v = [getattr(s, attr) / (s.bytes / GB) for s in self.good if s.bytes]
        return statistics.median(v) if v else None

    def median(self, attr: str) -> float | None:
        v = [getattr(s, attr) for s in self.good]
        return statistics.median(v) if v else None


def fmt(v, digits=2) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def spread(values: list[float], digits=2) -> str:
    if not values:
        return "failed"
    med = statistics.median(values)
    if len(values) == 1:
        return f"{med:.{digits}f}"
    return f"{med:.{digits}f} ({min(values):.{digits}f}–{max(values):.{digits}f})"


def limits(rows: list[Row]) -> dict[str, float | None]:
    by_id = {r.test.id: r for r in rows}
    return {"get": by_id["iperf3 -P1 -Z"].gbps() if "iperf3 -P1 -Z" in by_id else None,
            "put": by_id["dd tmpfs write"].gbps() if "dd tmpfs write" in by_id else None}


def big_table(rows: list[Row], reps: int) -> str:
    lim = limits(rows)
    out = ["| test | what ran | GB/s median (min–max) | vs limit | client CPU s/GB | server CPU s/GB | "
           "others' CPU s (median) | runs ok |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r.test.kind.startswith("small") or r.test.kind == "session":
            continue
        ratio = "limit"
        # Memory to memory has the network alone for its limit, as a download does.
        kind = "get" if r.test.kind == "mem" else r.test.kind
        if kind in ("get", "put") and lim[kind] and r.gbps():
            ref = "iperf3 -Z" if kind == "get" else "dd write"
            ratio = f"{r.gbps() / lim[kind]:.2f} × {ref}"
        server = "-" if r.test.kind == "limit-disk" else fmt(r.per_gb("server_cpu"), 3)
        out.append(f"| {r.test.id} | {r.test.tool} | {spread(r.rates())} | {ratio} | "
                   f"{fmt(r.per_gb('client_cpu'), 3)} | {server} | {fmt(r.median('others_cpu'))} | "
                   f"{len(r.good)}/{reps} |")
    return "\n".join(out)


def small_table(rows: list[Row], reps: int) -> str:
    out = ["| test | what ran | files/s median (min–max) | MB/s | wall s | client CPU s | server CPU s | "
           "others' CPU s | runs ok |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if not r.test.kind.startswith("small"):
            continue
        fps = r.files_per_s()
        mbps = statistics.median([s.bytes / s.wall / 1e6 for s in r.good]) if r.good else None
        out.append(f"| {r.test.id} | {r.test.tool} | {spread(fps, 0)} | {fmt(mbps, 0)} | "
                   f"{fmt(r.median('wall'))} | {fmt(r.median('client_cpu'))} | {fmt(r.median('server_cpu'))} | "
                   f"{fmt(r.median('others_cpu'))} | {len(r.good)}/{reps} |")
    return "\n".join(out)


def session_table(rows: list[Row], reps: int) -> str:
    out = ["| test | what ran | ms per session (wall) | client CPU ms | server CPU ms | runs ok |",
           "|---|---|---|---|---|---|"]
    for r in rows:
        if r.test.kind != "session":
            continue
        per = lambda attr: [1000 * getattr(s, attr) / s.files for s in r.good]
        med = lambda attr: statistics.median(per(attr)) if r.good else None
        out.append(f"| {r.test.id} | {r.test.tool} | {spread(per('wall'), 0)} | {fmt(med('client_cpu'), 0)} | "
                   f"{fmt(med('server_cpu'), 0)} | {len(r.good)}/{reps} |")
    return "\n".join(out)


def goals(rows: list[Row]) -> str:
    """The issue's goals, checked against this run's medians."""
    by_id = {r.test.id: r for r in rows}
    lim = limits(rows)
    lines = []

    def verdict(ok: bool | None) -> str:
        return "unknown" if ok is None else ("**met**" if ok else "**not met**")

    for kind, ref in (("get", "iperf3 -Z"), ("put", "dd tmpfs write")):
        for streams in (1, 4):
            r = by_id.get(f"rftp {kind} -P{streams}")
            if r is None:
                continue
            g, l = r.gbps(), lim[kind]
            ok = None if g is None or l is None else g >= 0.9 * l
            lines.append(f"- {'download' if kind == 'get' else 'upload'} `-P {streams}` ≥ 0.9 × {ref}: "
                         f"{fmt(g)} vs 0.9 × {fmt(l)} = {fmt(None if l is None else 0.9 * l)} GB/s: {verdict(ok)}")
    for kind in ("get", "put"):
        peer = by_id.get(f"vsftpd+curl {kind}")
        for streams in (1, 4):
            r = by_id.get(f"rftp {kind} -P{streams}")
            if r is None or peer is None:
                continue
            parts = []
            for side in ("client_cpu", "server_cpu"):
                a, b = r.per_gb(side), peer.per_gb(side)
                ok = None if a is None or b is None else a < b
                parts.append(f"{side.split('_')[0]} {fmt(a, 3)} vs {fmt(b, 3)} {verdict(ok)}")
            a, b = r.per_gb("client_cpu"), peer.per_gb("client_cpu")
            sa, sb = r.per_gb("server_cpu"), peer.per_gb("server_cpu")
            both = None if None in (a, b, sa, sb) else (a + sa) < (b + sb)
            parts.append(f"both together {fmt(None if both is None else a + sa, 3)} vs "
                         f"{fmt(None if both is None else b + sb, 3)} {verdict(both)}")
            lines.append(f"- CPU s/GB of `rftp {kind} -P {streams}` below vsftpd+curl's: " + "; ".join(parts))
    return "\n".join(lines)
