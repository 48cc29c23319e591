"""A wide-area path on a host whose kernel has no netem: two network
namespaces joined by a userspace delay line. The tests of long paths use
it, and so does make bench-wan-tcp (bench/wan_tcp_bench.py). It needs root.

The root namespace and a client namespace each get a TUN device. One
process (this module's main) reads every packet from either device and
writes it into the other half a round trip later, dropping a share of
them if asked. Servers listen in the root namespace on SERVER_ADDR; clients
run in the client namespace (CLIENT_PREFIX) and reach them only through the
delay line. Packets queue in arrival order, so a fixed delay keeps them in
order, as netem's does. One line runs at a time on a machine: a lock
(LOCK) keeps a second one, a test beside a bench, from tearing down the
first one's namespace.

The devices take TCP segmentation offload (IFF_VNET_HDR, TUNSETOFFLOAD):
TCP sees a path with a 1500-byte MTU and counts its window in such
segments, while the line moves the kernel's 64 KiB super-packets, a
thousandth of the packets it would otherwise read and write one by one.
There is no bandwidth limit: the path is as fast as the line keeps up.
Loss is per segment: a super-packet of n segments is lost whole with
probability 1 - (1 - p)^n, so the rate is right though losses come in
bursts of up to 44 segments.

DelayLine (below) sets it all up and tears it down; set(rtt_ms, loss_pct)
changes the path between measurements."""

import collections
import ctypes
import fcntl
import math
import os
import random
import select
import shutil
import struct
import subprocess
import sys
import time
from pathlib import Path

NAMESPACE = "rftp-wan"
SERVER_ADDR, CLIENT_ADDR = "10.77.0.1", "10.77.0.2"
SERVER_DEV, CLIENT_DEV = "rftpwan0", "rftpwan1"
CLIENT_PREFIX = ["ip", "netns", "exec", NAMESPACE]
MTU = 1500

TUNSETIFF, TUNSETOFFLOAD = 0x400454CA, 0x400454D0
IFF_TUN, IFF_NO_PI, IFF_VNET_HDR = 0x0001, 0x1000, 0x4000
TUN_F_CSUM, TUN_F_TSO4, TUN_F_TSO6 = 0x01, 0x02, 0x04
CLONE_NEWNET = 0x40000000
# struct virtio_net_hdr (IFF_VNET_HDR): flags, gso_type, hdr_len, gso_size, csum_start, csum_offset.
VNET_HDR = struct.Struct("=BBHHHH")
LOCK = Path("/run/rftp-wan.lock")
# A super-packet (64 KiB) and its virtio header, with room to spare.
READ_SIZE = 1 << 17
# Packets read from one device before the queues are looked at again.
READ_BURST = 64


def _open_tun(name: str) -> int:
    """Attaches to the persistent TUN device `name` in this thread's namespace."""
    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", name.encode(), IFF_TUN | IFF_NO_PI | IFF_VNET_HDR))
    fcntl.ioctl(fd, TUNSETOFFLOAD, TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6)
    return fd


def _enter_namespace(path: str) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    with open(path) as ns:
        if libc.setns(ns.fileno(), CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns {path}")


def _segments(packet: bytes) -> int:
    """How many wire segments a super-packet stands for."""
    _, gso_type, hdr_len, gso_size, _, _ = VNET_HDR.unpack_from(packet)
    if gso_type == 0 or gso_size == 0:
        return 1
    return max(1, math.ceil((len(packet) - VNET_HDR.size - hdr_len) / gso_size))


def _lost(packet: bytes, loss: float) -> bool:
    return random.random() < 1 - (1 - loss) ** _segments(packet)


class _Direction:
    """Packets read from one device, each due at the other after the delay."""

    def __init__(self, source: int, sink: int):
        self.source, self.sink = source, sink
        self.queue = collections.deque()

    def take(self, now: float, delay: float, loss: float) -> None:
        for _ in range(READ_BURST):
            try:
                packet = os.read(self.source, READ_SIZE)
            except BlockingIOError:
                return
            if loss and _lost(packet, loss):
                continue
            self.queue.append((now + delay, packet))

    def pass_due(self, now: float) -> None:
        while self.queue and self.queue[0][0] <= now:
            _, packet = self.queue.popleft()
            try:
                os.write(self.sink, packet)
            except OSError:   # the device's queue is full: the packet is lost
                pass

    def next_due(self):
        return self.queue[0][0] if self.queue else None


def serve(control: int) -> None:
    """Forwards between the two devices until the pipe control closes. Each
    line on it, `RTT_MS LOSS_PCT`, sets the path for the packets read from
    then on; the line answers `ok`."""
    server = _open_tun(SERVER_DEV)
    _enter_namespace(f"/run/netns/{NAMESPACE}")
    client = _open_tun(CLIENT_DEV)
    ways = (_Direction(server, client), _Direction(client, server))
    delay, loss = 0.0, 0.0
    poller = select.epoll()
    for fd in (server, client, control):
        poller.register(fd, select.EPOLLIN)
    pending = b""
    while True:
        dues = [d for d in (w.next_due() for w in ways) if d is not None]
        timeout = max(0.0, min(dues) - time.monotonic()) if dues else -1
        for fd, _ in poller.poll(timeout):
            if fd == control:
                said = os.read(control, 4096)
                if not said:
                    return
                *lines, pending = (pending + said).split(b"\n")
                for line in lines:
                    rtt_ms, loss_pct = (float(x) for x in line.split())
                    delay, loss = rtt_ms / 2000, loss_pct / 100
                    os.write(1, b"ok\n")
                continue
            now = time.monotonic()
            for way in ways:
                if way.source == fd:
                    way.take(now, delay, loss)
        now = time.monotonic()
        for way in ways:
            way.pass_due(now)


# `ip netns exec` puts /etc/netns/NAME/hosts over /etc/hosts. The client
# namespace reaches no name server, and globus-url-copy looks its own
# address up by name: the file answers.
HOSTS = Path("/etc/netns") / NAMESPACE / "hosts"


def _write_hosts() -> None:
    HOSTS.parent.mkdir(parents=True, exist_ok=True)
    HOSTS.write_text(Path("/etc/hosts").read_text() + f"{SERVER_ADDR} rftp-wan-server\n{CLIENT_ADDR} rftp-wan-client\n")


def _ip(*args: str, namespace: bool = False) -> None:
    prefix = CLIENT_PREFIX if namespace else []
    subprocess.run([*prefix, "ip", *args], check=True)


class DelayLine:
    """The namespace, the two devices and the forwarding process."""

    def __init__(self):
        self.proc = None
        self.lock = open(LOCK, "w")
        try:
            fcntl.flock(self.lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.lock.close()
            raise RuntimeError(f"another delay line runs on this machine ({LOCK} is held): "
                               "wait for that test or bench to end") from None
        try:
            self._remove_devices()   # what a killed run left behind
            self._start()
        except BaseException:
            self.close()
            raise

    def _start(self) -> None:
        _ip("netns", "add", NAMESPACE)
        _write_hosts()
        _ip("link", "set", "lo", "up", namespace=True)
        for dev, addr, peer, inside in ((SERVER_DEV, SERVER_ADDR, CLIENT_ADDR, False),
                                        (CLIENT_DEV, CLIENT_ADDR, SERVER_ADDR, True)):
            _ip("tuntap", "add", "dev", dev, "mode", "tun", "vnet_hdr", namespace=inside)
            _ip("addr", "add", addr, "peer", peer, "dev", dev, namespace=inside)
            _ip("link", "set", dev, "mtu", str(MTU), "up", namespace=inside)
        self.proc = subprocess.Popen([sys.executable, __file__], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True)
        self.set(0, 0)

    def set(self, rtt_ms: float, loss_pct: float = 0.0) -> None:
        self.proc.stdin.write(f"{rtt_ms} {loss_pct}\n")
        self.proc.stdin.flush()
        if self.proc.stdout.readline().strip() != "ok":
            raise RuntimeError(f"the delay line exited with {self.proc.wait()}")

    def close(self) -> None:
        try:
            if self.proc is not None:
                self.proc.stdin.close()
                try:
                    self.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
                self.proc.stdout.close()
                self.proc = None
            self._remove_devices()
        finally:
            if not self.lock.closed:
                self.lock.close()   # and with it the lock

    @staticmethod
    def _remove_devices() -> None:
        subprocess.run(["ip", "tuntap", "del", "dev", SERVER_DEV, "mode", "tun"], capture_output=True)
        subprocess.run(["ip", "netns", "del", NAMESPACE], capture_output=True)
        shutil.rmtree(HOSTS.parent, ignore_errors=True)


if __name__ == "__main__":
    serve(sys.stdin.fileno())
