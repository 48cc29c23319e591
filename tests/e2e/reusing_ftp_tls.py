"""Python's ftplib as an FTPS client should be: each data connection resumes
the control connection's TLS session, as rftpd requires by default (stock
ftplib.FTP_TLS never does)."""

import ftplib


class ReusingFtpTls(ftplib.FTP_TLS):
    def ntransfercmd(self, cmd, rest=None):
        conn, size = ftplib.FTP.ntransfercmd(self, cmd, rest)
        if self._prot_p:
            conn = self.context.wrap_socket(conn, server_hostname=self.host, session=self.sock.session)
        return conn, size
