"""Login tickets (docs/protocol.md, "Login tickets: TCKT"): a logged-in
session's ticket logs the client's other sessions in without a password
check. rftpd's rules with ftplib, in clear and under real TLS."""

import ftplib
import os
import re
import ssl

import pytest

from conftest import PASSWORDS
from test_tls_daemon import ca, ftps  # noqa: F401 (fixtures)

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


def test_wrong_tickets_count_as_failed_logins(rftpd):
    f = session(rftpd)
    closed = False
    for _ in range(10):
        f.sendcmd("USER alice")
        try:
            f.sendcmd("TCKT " + os.urandom(32).hex())
        except ftplib.error_temp as e:
            assert str(e).startswith("421"), e
            closed = True
            break
        except ftplib.error_perm as e:
            assert str(e).startswith("530"), e
    assert closed, "the session stayed open after ten wrong tickets"


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
