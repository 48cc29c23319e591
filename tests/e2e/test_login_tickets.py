"""Login tickets (docs/protocol.md, "Login tickets: TCKT"): a logged-in
session's ticket logs the client's other sessions in without a password
check. rftpd's rules with ftplib, in clear and under real TLS, and rftp's
many-file runs, which log in once with the password and then with the
ticket."""

import ftplib
import hashlib
import os
import re
import ssl
import subprocess

import pytest

from conftest import PASSWORDS, TESTING
from test_tls_daemon import ca, ftps  # noqa: F401 (fixtures)

RFTP = str(TESTING / "rftp")
TICKET = re.compile(r"^200 TCKT ([0-9a-f]{64})$")


def session(d):
    f = ftplib.FTP(encoding="utf-8")
    f.connect("127.0.0.1", d.port, timeout=10)
    return f


def logged_in(d, user="alice"):
    f = session(d)
    f.login(user, PASSWORDS[user])
    return f


def ticket_of(f):
    reply = f.sendcmd("TCKT")
    m = TICKET.match(reply)
    assert m, reply
    return m.group(1)


def with_ticket(d, user, ticket):
    """The reply to TCKT <ticket> after USER, on a new session (and it)."""
    f = session(d)
    assert f.sendcmd(f"USER {user}").startswith("331")
    try:
        return f.sendcmd(f"TCKT {ticket}"), f
    except ftplib.error_perm as refused:
        return str(refused), f


def test_a_ticket_logs_another_session_in_as_its_user(rftpd):
    (rftpd.roots["alice"] / "seen.txt").write_text("x")
    first = logged_in(rftpd)
    assert "TCKT" in first.sendcmd("FEAT").split()
    ticket = ticket_of(first)
    reply, second = with_ticket(rftpd, "alice", ticket)
    assert reply.startswith("230"), reply
    assert "seen.txt" in second.nlst()
    # The same ticket serves any number of the client's sessions.
    reply, third = with_ticket(rftpd, "alice", ticket)
    assert reply.startswith("230"), reply
    log = rftpd.log()
    assert len(re.findall(r"event=login access=\S+ method=ticket", log)) == 2
    assert len(re.findall(r"event=login access=\S+ method=password", log)) == 1
    # No log line shows the ticket, not even at debug level.
    assert ticket not in log
    for f in (first, second, third):
        f.quit()


def test_a_ticket_is_refused_for_another_user_a_wrong_one_and_once_its_session_ended(rftpd):
    first = logged_in(rftpd)
    ticket = ticket_of(first)
    for user, shown in (("bob", ticket), ("alice", "0" * 64), ("alice", ticket[:-1]), ("alice", ticket.upper())):
        reply, f = with_ticket(rftpd, user, shown)
        assert reply.startswith("530"), (user, reply)
        f.close()
    # Asking again replaces the ticket.
    newer = ticket_of(first)
    reply, f = with_ticket(rftpd, "alice", ticket)
    assert reply.startswith("530"), reply
    f.close()
    first.quit()
    reply, f = with_ticket(rftpd, "alice", newer)
    assert reply.startswith("530"), reply
    # Refused, the session may still log in with its password.
    f.login("alice", PASSWORDS["alice"])
    f.quit()
    assert rftpd.log().count("event=login_ticket_refused") == 6


def test_tckt_outside_a_login_and_for_anonymous_logins(rftpd_factory):
    d = rftpd_factory(anonymous=True)
    f = session(d)
    with pytest.raises(ftplib.error_perm, match="^530"):
        f.sendcmd("TCKT")
    with pytest.raises(ftplib.error_perm, match="^503"):
        f.sendcmd("TCKT " + "a" * 64)
    f.login("alice", PASSWORDS["alice"])
    with pytest.raises(ftplib.error_perm, match="^503"):
        f.sendcmd("TCKT " + "a" * 64)
    f.quit()
    anon = session(d)
    anon.login("anonymous", "me@example.org")
    with pytest.raises(ftplib.error_perm, match="^504"):
        anon.sendcmd("TCKT")
    anon.quit()


def test_a_refused_ticket_costs_no_login_attempt_and_the_third_closes(rftpd_factory):
    """With max_login_failures 1, a stale ticket still leaves the session
    its password; a session that goes on showing tickets is closed."""
    d = rftpd_factory(extra_config="limits: {max_login_failures: 1}\n")
    reply, f = with_ticket(d, "alice", os.urandom(32).hex())
    assert reply.startswith("530"), reply
    f.login("alice", PASSWORDS["alice"])
    f.quit()
    f = session(d)
    for i in range(3):
        f.sendcmd("USER alice")
        try:
            reply = f.sendcmd("TCKT " + os.urandom(32).hex())
        except ftplib.error_perm as e:
            reply = str(e)
        except ftplib.error_temp as e:
            reply = str(e)
        assert reply.startswith("421" if i == 2 else "530"), (i, reply)


def test_a_ticket_asked_for_under_tls_is_refused_in_clear(ftps, ca):  # noqa: F811 (fixtures)
    context = ssl.create_default_context(cafile=str(ca.ca))
    first = ftplib.FTP_TLS(context=context, timeout=30)
    first.connect("localhost", ftps.port)
    first.login("alice", PASSWORDS["alice"])
    ticket = ticket_of(first)
    reply, clear = with_ticket(ftps, "alice", ticket)
    assert reply.startswith("530"), reply
    clear.close()
    second = ftplib.FTP_TLS(context=context, timeout=30)
    second.connect("localhost", ftps.port)
    second.auth()
    assert second.sendcmd("USER alice").startswith("331")
    assert second.sendcmd(f"TCKT {ticket}").startswith("230")
    second.quit()
    first.quit()


def run_rftp(*args, d=None, check=True):
    env = dict(os.environ, RFTP_PASSWORD=PASSWORDS["alice"])
    r = subprocess.run([RFTP, "--no-progress", *args], env=env, capture_output=True, text=True, timeout=120)
    if check:
        assert r.returncode == 0, r.stderr + (d.log()[-3000:] if d else "")
    return r


def test_rftp_logs_its_other_sessions_in_with_a_ticket(rftpd, tmp_path):
    top = rftpd.roots["alice"] / "many"
    top.mkdir()
    files = {f"f{i:03}.bin": os.urandom(1000 + i) for i in range(40)}
    for name, body in files.items():
        (top / name).write_bytes(body)
    url = f"rftp://alice@127.0.0.1:{rftpd.port}"
    (tmp_path / "down").mkdir()
    r = run_rftp("-vv", "get", "-r", "-j", "4", f"{url}/many", str(tmp_path / "down"), d=rftpd)
    for name, body in files.items():
        assert hashlib.sha256((tmp_path / "down" / "many" / name).read_bytes()).digest() == hashlib.sha256(body).digest()
    log = rftpd.log()
    assert len(re.findall(r"event=login access=\S+ method=password", log)) == 1, log
    assert len(re.findall(r"event=login access=\S+ method=ticket", log)) == 3, log
    # The ticket never shows, in the client's debug output either.
    ticket = re.search(r"event=login_ticket_issued", log)
    assert ticket
    assert not re.search(r"TCKT [0-9a-f]{64}", r.stderr), r.stderr
    # And the uploads' sessions the same.
    (tmp_path / "up").mkdir()
    for name, body in files.items():
        (tmp_path / "up" / name).write_bytes(body)
    run_rftp("put", "-r", "-j", "4", str(tmp_path / "up"), f"{url}/", d=rftpd)
    assert len(re.findall(r"event=login access=\S+ method=ticket", rftpd.log())) == 6
    assert sorted(p.name for p in (rftpd.roots["alice"] / "up").iterdir()) == sorted(files)


def test_a_run_of_one_session_asks_for_no_ticket(rftpd, tmp_path):
    (rftpd.roots["alice"] / "one.bin").write_bytes(b"1" * 100)
    url = f"rftp://alice@127.0.0.1:{rftpd.port}"
    run_rftp("get", "-j", "1", f"{url}/one.bin", str(tmp_path / "one.bin"), d=rftpd)
    assert "event=login_ticket_issued" not in rftpd.log()


def test_a_session_opened_once_the_ticket_lapsed_sends_the_password(rftpd, tmp_path):
    """sync --delete of an upload opens its deleting session after the
    copying sessions closed, the ticket's own among them: rftp forgot the
    ticket then, and shows none that rftpd would refuse."""
    src = tmp_path / "src"
    src.mkdir()
    for i in range(12):
        (src / f"s{i}.bin").write_bytes(os.urandom(500 + i))
    dst = rftpd.roots["alice"] / "dst"
    dst.mkdir()
    (dst / "extra.bin").write_bytes(b"gone soon")
    url = f"rftp://alice@127.0.0.1:{rftpd.port}"
    run_rftp("sync", "-j", "4", "--delete", str(src), f"{url}/dst/", d=rftpd)
    assert sorted(p.name for p in dst.iterdir()) == sorted(p.name for p in src.iterdir())
    log = rftpd.log()
    assert "event=login_ticket_refused" not in log, log[-3000:]
    assert len(re.findall(r"event=login access=\S+ method=ticket", log)) == 3, log[-3000:]
