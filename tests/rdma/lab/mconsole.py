#!/usr/bin/env python3
"""Sends one command to a running UML guest's management console and prints
the reply: `mconsole.py SOCKET sysrq w` makes the guest kernel print every
blocked task's stack to its console, which is what a guest that stopped
making progress gets asked before it is killed (run-in-guest.sh --stall;
not `sysrq t`, which panics UML 6.1 when it reaches a workqueue worker).
The protocol is UML's arch/um/drivers/mconsole.h: a datagram of magic,
version, length and up to 512 bytes of command; replies of error, more,
length and data until more is 0. Exit status: 0, or 1 when the guest did
not answer within 10 s."""

import socket
import struct
import sys

MAGIC, VERSION, MAX_DATA = 0xCAFEBABE, 2, 512


def main() -> int:
    path, command = sys.argv[1], " ".join(sys.argv[2:]).encode()[:MAX_DATA]
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
        s.bind("")  # an autobound address, so the guest can answer
        s.settimeout(10)
        s.sendto(struct.pack("=III", MAGIC, VERSION, len(command)) + command.ljust(MAX_DATA, b"\0"), path)
        try:
            while True:
                reply = s.recv(12 + MAX_DATA)
                err, more, length = struct.unpack("=iii", reply[:12])
                sys.stdout.write(reply[12:12 + length].decode(errors="replace"))
                if not more:
                    break
        except (socket.timeout, struct.error):
            print("mconsole: no answer from the guest", file=sys.stderr)
            return 1
        print()
        if err:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
