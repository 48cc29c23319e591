"""What rftp names an upload's source as in SRCE, and rftpd shows in MLST as
X.rftp-source (protocol/source_identity.h), for the resume tests of both
end-to-end trees (tests/e2e over TCP, tests/rdma/guest over RDMA)."""

from pathlib import Path


def source_token(path: Path) -> str:
    """"<size>:<mtime>:<ctime>", each time as <seconds>.<nanoseconds>."""
    st = path.stat()
    return f"{st.st_size}:" + ":".join(f"{ns // 10**9}.{ns % 10**9:09d}" for ns in (st.st_mtime_ns, st.st_ctime_ns))
