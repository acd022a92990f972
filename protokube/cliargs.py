"""What every `protokube` sub-command shares on its command line: one-line errors with exit code 2,
defaults shown in --help, address flags checked before anything starts, and the data dir lock."""

from __future__ import annotations

import argparse
import errno
import fcntl
import ipaddress
import os
import sys
from pathlib import Path
from typing import NoReturn

USAGE_ERROR = 2
# The default data dir: data/ in the working directory, as etcd's default.etcd is (for `make run`, the
# checkout's data/, which git ignores; an installed package has no folder of its own to write in).
# Options give it as a str default: argparse applies their ``type`` (``directory``, which makes it) to
# str defaults only.
DEFAULT_DATA_DIR = Path.cwd() / "data"


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Defaults shown where they tell something: plain values (a list joined by commas), not None,
    False, empty ones or objects, and not where the help already speaks of the default."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        shown = _shown_default(action.default)
        if shown is None or "default" in text.lower():
            return text
        return f"{text} (default: {shown})"


def _shown_default(value: object) -> str | None:
    if isinstance(value, bool) or value in (None, "", argparse.SUPPRESS):
        return None
    if isinstance(value, str | int | float | Path):
        return str(value)
    if isinstance(value, tuple | list) and value and all(isinstance(v, str) for v in value):
        return ",".join(value)
    return None


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors (``protokube serve: --listen: ...``) and defaults in --help."""

    def __init__(self, prog: str, description: str) -> None:
        super().__init__(prog=prog, description=description, formatter_class=HelpFormatter)

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: {message} (see --help)", file=sys.stderr)
        sys.exit(USAGE_ERROR)


def is_ip(text: str) -> bool:
    """Whether ``text`` is an IP address literal (not a host name)."""
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return host == "localhost"


def host_port(text: str) -> str:
    """HOST:PORT with a numeric port 0-65535 (IPv6 hosts in brackets)."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise argparse.ArgumentTypeError(f"must be HOST:PORT, got {text!r}")
    return text


def directory(text: str) -> Path:
    """A directory that exists or can be made (checked before anything starts)."""
    path = Path(text)
    try:
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as err:
        raise argparse.ArgumentTypeError(f"cannot use {text!r} as a data directory: {err.strerror}") from None
    if not os.access(path, os.W_OK):
        problem = errno.EROFS if os.statvfs(path).f_flag & os.ST_RDONLY else errno.EACCES
        raise argparse.ArgumentTypeError(f"cannot use {text!r} as a data directory: {os.strerror(problem)}")
    return path


def lock_data_dir(path: Path, prog: str) -> int:
    """Hold an exclusive lock on ``path`` for the life of the process; exit at once when another
    process holds it (two servers on one data dir would corrupt each other's view of it)."""
    fd = os.open(path / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.read(fd, 32).decode(errors="replace").strip() or "another process"
        print(f"{prog}: {path} is in use by process {holder}; one server per data directory", file=sys.stderr)
        sys.exit(1)
    os.ftruncate(fd, 0)
    os.write(fd, str(os.getpid()).encode())
    return fd
