"""A real nginx (Debian's package, installed by .ci/run) in front of a real agent, one config per test.

``start_nginx(servers)`` writes a complete nginx.conf into a fresh temporary prefix (its own pid file, logs and
temp paths; no system config, no modules), starts ``nginx -p PREFIX -c nginx.conf`` in the foreground as an
unprivileged process (as ``nobody`` when the tests run as root) and returns once every ``listen`` port accepts
connections. ``servers`` is the ``server { … }`` part of the ``http`` block; each test passes the one gateway
configuration it is about. Loopback only: every ``listen`` must name 127.0.0.1.
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tests.peers.harness import terminate

NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
UNPRIVILEGED = "nobody"
START_TIMEOUT = 10.0

_CONF = """\
daemon off;
master_process on;
worker_processes 1;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log info;
events {{ worker_connections 256; }}
http {{
    access_log {prefix}/access.log;
    default_type application/octet-stream;
    client_body_temp_path {prefix}/tmp/body;
    proxy_temp_path {prefix}/tmp/proxy;
    fastcgi_temp_path {prefix}/tmp/fastcgi;
    uwsgi_temp_path {prefix}/tmp/uwsgi;
    scgi_temp_path {prefix}/tmp/scgi;
{servers}
}}
"""


class NginxStartError(RuntimeError):
    """nginx refused its config or did not listen in time."""


@dataclass(eq=False)
class Nginx:
    prefix: Path
    process: subprocess.Popen[bytes]
    ports: tuple[int, ...]

    @property
    def running(self) -> bool:
        return self.process.poll() is None

    def error_log(self) -> str:
        path = self.prefix / "error.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def stop(self) -> None:
        """SIGQUIT would wait for open streams; SIGTERM is nginx's fast shutdown. Always reaps; idempotent."""
        terminate(self.process)
        shutil.rmtree(self.prefix, ignore_errors=True)


def start_nginx(servers: str) -> Nginx:
    if NGINX is None:
        raise NginxStartError("nginx is not installed: .ci/run installs Debian's nginx-light")
    ports = tuple(int(p) for p in re.findall(r"listen\s+127\.0\.0\.1:(\d+)", servers))
    if not ports or re.search(r"listen\s+(?!127\.0\.0\.1:)", servers):
        raise ValueError("every listen directive must name 127.0.0.1:<port>")
    prefix = Path(tempfile.mkdtemp(prefix="a2a-nginx-"))
    for sub in ("tmp/body", "tmp/proxy", "tmp/fastcgi", "tmp/uwsgi", "tmp/scgi"):
        (prefix / sub).mkdir(parents=True)
    conf = prefix / "nginx.conf"
    conf.write_text(_CONF.format(prefix=prefix, servers=servers))
    user = None
    if os.geteuid() == 0:  # never run the gateway as root: the whole prefix belongs to the unprivileged user
        entry = pwd.getpwnam(UNPRIVILEGED)
        for path in (prefix, *prefix.rglob("*")):
            os.chown(path, entry.pw_uid, entry.pw_gid)
        user = (entry.pw_uid, entry.pw_gid)
    log = prefix / "stderr.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [NGINX, "-p", str(prefix), "-c", str(conf), "-e", str(prefix / "error.log")],
            stdin=subprocess.DEVNULL, stdout=out, stderr=out,
            user=user[0] if user else None, group=user[1] if user else None,
        )
    gateway = Nginx(prefix, process, ports)
    try:
        _wait_listening(gateway, log)
    except BaseException:
        gateway.stop()
        raise
    return gateway


def _wait_listening(gateway: Nginx, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    pending = list(gateway.ports)
    while pending:
        if not gateway.running:
            raise NginxStartError(f"nginx exited with {gateway.process.returncode}:\n{log.read_text()}\n"
                                  f"{gateway.error_log()}")
        try:
            with socket.create_connection(("127.0.0.1", pending[0]), timeout=0.5):
                pending.pop(0)
                continue
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise NginxStartError(f"nginx did not listen on {pending} in time:\n{gateway.error_log()}")
        time.sleep(0.02)
    if "bind() to" in gateway.error_log():  # another program holds a port: what answers there is not this nginx
        raise NginxStartError(f"nginx could not bind its ports:\n{gateway.error_log()}")
