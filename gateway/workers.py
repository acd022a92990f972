"""`protokube serve --gateways N`: N gateway processes on one machine, one storage.

Python runs one request at a time per process; a host's other cores are used by more gateway
processes. The first process (the one started) owns the data dir, the embedded storage and the
kubeconfig; it starts N-1 workers, each `protokube gateway` against the same storage, binding the
same addresses with SO_REUSEPORT so that the kernel spreads connections among them. Workers die
with the first process (PR_SET_PDEATHSIG) and are stopped by it.
"""

from __future__ import annotations

import subprocess
import sys

from protokube.parent import child_env

# Options of the first process that workers must not repeat (they get their own).
OWN_OPTIONS = ("--gateways", "--storage")


def worker_argv(argv: list[str], storage: str, index: int, compaction: bool) -> list[str]:
    """The worker's command line: the first process's options, its storage, its index."""
    kept: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
            continue
        name = arg.split("=", 1)[0]
        if name in OWN_OPTIONS:
            skip = "=" not in arg
            continue
        kept.append(arg)
    interval = [] if compaction else ["--etcd-compaction-interval", "0"]  # the last one given counts
    command = [sys.executable, "-m", "protokube", "gateway", *kept, "--storage", storage]
    return [*command, *interval, "--gateway-index", str(index)]


def start_workers(argv: list[str], storage: str, count: int, compaction: bool) -> list[subprocess.Popen[bytes]]:
    return [
        subprocess.Popen(worker_argv(argv, storage, index, compaction), env=child_env()) for index in range(1, count)
    ]


def stop_workers(workers: list[subprocess.Popen[bytes]]) -> None:
    for worker in workers:
        if worker.poll() is None:
            worker.terminate()
    for worker in workers:
        try:
            worker.wait(10)
        except subprocess.TimeoutExpired:
            worker.kill()
