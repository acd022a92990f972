"""The embedded storage service of `protokube serve`: a child process, supervised.

It listens on an owner-only Unix socket in the data dir, so that other local users cannot bypass
the gateway with an etcd client. If it dies, it is started again with a growing delay (logged);
the gateway's storage connection reconnects by itself and its watch caches resume from their
last revision. The child gets SIGTERM when the gateway process dies, even by SIGKILL, and
otherwise only from the gateway.
"""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
import time
from pathlib import Path

from protokube.parent import child_env

log = logging.getLogger("protokube.storage")
RESTART_MIN, RESTART_MAX = 0.5, 10.0  # seconds before a restart, doubling after quick failures
STABLE_AFTER = 60.0  # a child that ran this long resets the delay


class EmbeddedStorage:
    def __init__(self, data_dir: Path, retention: float, quota_backend_bytes: int = 0, in_memory: bool = False) -> None:
        self.data_dir = data_dir / "storage"
        self.address = f"unix://{(self.data_dir / 'storage.sock').resolve()}"
        self.command = [sys.executable, "-m", "protokube", "storage", "--listen", self.address]
        self.command += ["--data-dir", str(self.data_dir), "--compaction-retention", str(retention)]
        self.command += ["--quota-backend-bytes", str(quota_backend_bytes)]
        self.command += ["--in-memory"] if in_memory else []
        self.child: subprocess.Popen[str] | None = None
        self.restarts = 0
        self._stopping = False

    def start(self) -> None:
        """Start the child and wait until it listens (RuntimeError when it cannot)."""
        self.launch()
        self.wait_listening()

    def launch(self) -> None:
        """Start the child; ``wait_listening`` waits for it, so that the caller can work meanwhile."""
        # stderr is the gateway's own: the child's messages show where the gateway's do.
        # Its own process group: a signal to ours (Ctrl-C, `kill -- -PGID`) reaches the gateway, which
        # finishes its last writes (leader election's release) before it stops the child itself.
        self.child = subprocess.Popen(self.command, stdout=subprocess.PIPE, text=True, env=child_env(), process_group=0)

    def wait_listening(self) -> None:
        """Wait until the launched child listens (RuntimeError when it cannot)."""
        assert self.child is not None and self.child.stdout is not None
        line = self.child.stdout.readline()
        if "listening" not in line:
            self.child.kill()
            raise RuntimeError(f"embedded storage did not start: {line.strip() or 'see its message above'}")

    async def supervise(self) -> None:
        """Restart the child whenever it exits, until ``stop``."""
        delay = RESTART_MIN
        loop = asyncio.get_running_loop()
        while not self._stopping:
            started = time.monotonic()
            assert self.child is not None
            code = await loop.run_in_executor(None, self.child.wait)
            if self._stopping:
                return
            if time.monotonic() - started > STABLE_AFTER:
                delay = RESTART_MIN
            log.warning("embedded storage exited with code %s; starting it again in %.1f s", code, delay)
            await asyncio.sleep(delay)
            try:
                await loop.run_in_executor(None, self.start)
                self.restarts += 1
                log.warning("embedded storage started again (restart %d)", self.restarts)
            except RuntimeError as err:
                log.warning("%s", err)
            delay = min(delay * 2, RESTART_MAX)

    def stop(self) -> None:
        self._stopping = True
        if self.child is not None and self.child.poll() is None:
            self.child.terminate()
            try:
                self.child.wait(5)
            except subprocess.TimeoutExpired:
                self.child.kill()
