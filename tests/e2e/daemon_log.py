"""Reading rftpd's log in tests, shared by the TCP tests here and the RDMA
lab's; works with either's daemon helper (anything with .log())."""

import time


def transfer_line(daemon, direction: str, timeout: float = 30) -> str:
    """The daemon's log line for a transfer (direction: store or retrieve),
    once written: it may come just after the replies the client acted on."""
    deadline = time.monotonic() + timeout
    while True:
        line = next((l for l in daemon.log().splitlines() if f"event=transfer direction={direction}" in l), None)
        if line or time.monotonic() > deadline:
            assert line, f"no {direction} transfer in the daemon's log"
            return line
        time.sleep(0.05)
