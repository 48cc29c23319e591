"""A password hash in rftpd's format at the lowest cost it accepts, for the
test users of the host suite and of the lab."""

import base64
import hashlib
import os


def cheap_password_hash(password: str) -> str:
    """scrypt at ln=10: 1 MiB and about 3 ms, where rftpd's default yescrypt
    takes about 20 ms and more memory. Every login pays the hash: the host
    suite logs in about 900 times, and in the lab guest each fresh page is a
    page fault the UML kernel serves slowly. The hashes have tests of their
    own (tests/e2e/test_password_hashes.py)."""
    salt = os.urandom(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, n=1 << 10, r=8, p=1, dklen=32)
    encode = lambda b: base64.b64encode(b).decode()  # noqa: E731
    return f"$scrypt$ln=10,r=8,p=1${encode(salt)}${encode(digest)}"
