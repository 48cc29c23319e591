"""What a power loss leaves of a transfer, played without one: the resume
journal naming another boot, and the bytes written after its last checkpoint
gone (zeros). Shared by the TCP tests here and the RDMA lab's
(tests/rdma/guest/test_rdma_power_loss.py); imports nothing of either's conftest."""

from pathlib import Path

# Checkpoints frequent enough to land within a test (test-only switch).
FAST_CHECKPOINTS = {"RFTP_TEST_CHECKPOINT_MS": "20"}


def journal_fields(journal: Path):
    """(written, durable, boot id) of a resume journal, or None."""
    try:
        written, durable, boot = journal.read_text().split()
        return int(written), int(durable), boot
    except (OSError, ValueError):
        return None


def synced_part_way(size: int):
    """A predicate on a journal: a checkpoint has synced part of the file, not all of it."""
    def ready(journal: Path) -> bool:
        fields = journal_fields(journal)
        return fields is not None and 0 < fields[1] <= fields[0] < size
    return ready


def lose_power(part: Path, journal: Path) -> int:
    """Leaves what a power loss would: the journal from another boot, the
    bytes written after the last checkpoint gone. Returns the durable prefix."""
    written, durable, boot = journal_fields(journal)
    assert boot == Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    journal.write_text(f"{written} {durable} 00000000-0000-0000-0000-000000000000\n")
    with open(part, "r+b") as f:
        f.seek(durable)
        f.write(bytes(part.stat().st_size - durable))
    return durable
