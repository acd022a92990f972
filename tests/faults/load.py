"""A mixed write load on ConfigMaps whose every acknowledged outcome is remembered, a watch log
that can be resumed, and the checks after a crash: acknowledged writes present, unacknowledged
ones applied wholly or not at all, revisions only growing, the watch without gap or duplicate.

Each worker owns its names and changes them one request at a time: create (some with a
finalizer), update (PUT guarded by resourceVersion), merge patch, delete, finalizer removal. An
answer below 300 is acknowledged (the object is what the answer says); a 4xx changed nothing; no
answer, or 5xx, leaves two candidates — the state before and the state intended.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import httpx

FINALIZER = "example.com/keep"
ABSENT: dict[str, Any] | None = None


def _summary(obj: dict[str, Any] | None) -> tuple | None:
    """What a crash must not tear apart: data, finalizers, whether deletion started."""
    if obj is None:
        return None
    meta = obj["metadata"]
    return (
        json.dumps(obj.get("data") or {}, sort_keys=True),
        tuple(meta.get("finalizers") or ()),
        "deletionTimestamp" in meta,
    )


@dataclass
class Name:
    """One object's remembered state: ``summary`` when certain, else ``candidates``."""

    summary: tuple | None = None
    resource_version: int = 0  # of the last acknowledged write
    uncertain: list[tuple | None] = field(default_factory=list)


class MixedLoad:
    def __init__(self, base_url: str, namespace: str, seed: int, workers: int = 4, names_per_worker: int = 8) -> None:
        self.base_url = base_url
        self.path = f"/api/v1/namespaces/{namespace}/configmaps"
        self.rng = random.Random(seed)
        self.names = {f"w{w}-n{n}": Name() for w in range(workers) for n in range(names_per_worker)}
        self.workers = workers
        self.acknowledged = 0
        self.max_revision = 0
        self.server_errors: list[str] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    # ---- running ------------------------------------------------------------------------------
    def start(self) -> None:
        self._stop.clear()
        self._threads = [
            threading.Thread(target=self._work, args=(w, random.Random(self.rng.random())), daemon=True)
            for w in range(self.workers)
        ]
        for thread in self._threads:
            thread.start()

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(30)

    def _work(self, worker: int, rng: random.Random) -> None:
        mine = [n for n in self.names if n.startswith(f"w{worker}-")]
        with httpx.Client(base_url=self.base_url, timeout=10) as client:
            while not self._stop.is_set():
                name = rng.choice(mine)
                if self.names[name].uncertain:
                    continue  # settled only by the check after the crash
                if not self._step(client, rng, name):
                    return  # the server is gone: this worker waits for the next cycle

    def _step(self, client: httpx.Client, rng: random.Random, name: str) -> bool:
        state = self.names[name]
        current = state.summary
        value = str(rng.randrange(10**6))
        if current is None:
            finalizers = [FINALIZER] if rng.random() < 0.3 else []
            body = {"metadata": {"name": name, "finalizers": finalizers}, "data": {"v": value}}
            intended = (json.dumps({"v": value}), tuple(finalizers), False)
            request = ("POST", self.path, body, None)
        elif current[2]:  # deletion started: remove the finalizer, the object goes
            intended = None
            request = ("PATCH", f"{self.path}/{name}", {"metadata": {"finalizers": None}}, "merge")
        else:
            kind = rng.choice(["update", "patch", "patch", "delete"])
            if kind == "delete":
                intended = (current[0], current[1], True) if current[1] else None
                request = ("DELETE", f"{self.path}/{name}", None, None)
            elif kind == "update":
                body = {
                    "metadata": {
                        "name": name,
                        "resourceVersion": str(state.resource_version),
                        "finalizers": list(current[1]),
                    },
                    "data": {"v": value},
                }
                intended = (json.dumps({"v": value}), current[1], False)
                request = ("PUT", f"{self.path}/{name}", body, None)
            else:
                intended = (json.dumps({**json.loads(current[0]), "p": value}, sort_keys=True), current[1], False)
                request = ("PATCH", f"{self.path}/{name}", {"data": {"p": value}}, "merge")
        method, path, body, patch = request
        headers = {"Content-Type": "application/merge-patch+json"} if patch else {}
        try:
            response = client.request(
                method, path, content=json.dumps(body) if body is not None else None, headers=headers
            )
        except httpx.TransportError:
            state.uncertain = [current, intended]
            return False
        if response.status_code >= 500:
            if response.status_code not in (503, 504):  # storage out of reach is 503/504, never 500
                self.server_errors.append(f"{method} {path}: {response.status_code} {response.text[:300]}")
            state.uncertain = [current, intended]
            return False
        if response.status_code >= 300:
            return True  # refused: nothing changed (a conflict after an unnoticed change would show in the check)
        answer = response.json()
        with self._lock:
            self.acknowledged += 1
        if method == "DELETE" and answer.get("kind") == "Status":
            state.summary, state.resource_version = None, 0
            return True
        revision = int(answer["metadata"]["resourceVersion"])
        state.summary = None if intended is None else _summary(answer)
        state.resource_version = revision
        with self._lock:
            self.max_revision = max(self.max_revision, revision)
        return True

    # ---- checking -----------------------------------------------------------------------------
    def check(self, client: httpx.Client) -> int:
        """Compare the stored objects with what was acknowledged; settle uncertain names. Returns
        the list's revision (which must not be below any acknowledged one)."""
        listed = client.get(self.path)
        assert listed.status_code == 200, listed.text
        body = listed.json()
        stored = {item["metadata"]["name"]: item for item in body["items"]}
        revision = int(body["metadata"]["resourceVersion"])
        assert revision >= self.max_revision, f"revision went back: {revision} < {self.max_revision}"
        for name, state in self.names.items():
            found = _summary(stored.get(name))
            if state.uncertain:
                assert found in state.uncertain, f"{name}: half applied: {found} not in {state.uncertain}"
                state.uncertain = []
            else:
                assert found == state.summary, f"{name}: acknowledged {state.summary}, stored {found}"
            state.summary = found
            if found is not None:
                stored_revision = int(stored[name]["metadata"]["resourceVersion"])
                assert stored_revision >= state.resource_version, name
                state.resource_version = stored_revision
        return revision


class WatchLog:
    """A watch on the load's collection, replayed into a state that must equal the list's."""

    def __init__(self, base_url: str, path: str) -> None:
        self.base_url = base_url
        self.path = path
        self.state: dict[str, int] = {}  # name → resourceVersion, from the events
        self.last = 0
        self.relists = 0
        self._thread: threading.Thread | None = None
        self.errors: list[str] = []
        self.seen: deque[str] = deque(maxlen=5)  # the last lines read, with when (for a failure's message)

    def begin(self, client: httpx.Client) -> None:
        listed = client.get(self.path).json()
        self.state = {i["metadata"]["name"]: int(i["metadata"]["resourceVersion"]) for i in listed["items"]}
        self.last = int(listed["metadata"]["resourceVersion"])

    def follow(self, timeout_seconds: int | None = None) -> None:
        """Read events in a thread until the connection ends (the server is killed) or the timeout."""
        self._thread = threading.Thread(target=self._read, args=(timeout_seconds,), daemon=True)
        self._thread.start()

    def join(self, timeout: float = 30) -> None:
        assert self._thread is not None
        self._thread.join(timeout)
        assert not self._thread.is_alive(), f"the watch did not end; its last lines: {list(self.seen)}"

    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def wait_for_state(self, expected: dict[str, int], timeout: float = 15) -> None:
        """Until the events replayed equal ``expected`` (name → resourceVersion), or the watch ended."""
        deadline = time.monotonic() + timeout
        while self.state != expected and self.alive() and not self.errors:
            assert time.monotonic() < deadline, f"the watch is at {self.last}, its state not the list's"
            time.sleep(0.02)

    def _read(self, timeout_seconds: int | None) -> None:
        params: dict[str, Any] = {"watch": "1", "resourceVersion": str(self.last), "allowWatchBookmarks": "true"}
        if timeout_seconds:
            params["timeoutSeconds"] = str(timeout_seconds)
        try:
            with (
                httpx.Client(base_url=self.base_url, timeout=httpx.Timeout(10, read=None)) as client,
                client.stream("GET", self.path, params=params) as response,
            ):
                if response.status_code != 200:
                    self.errors.append(f"watch answered {response.status_code}")
                    return
                for line in response.iter_lines():
                    self.seen.append(f"{time.monotonic():.2f} {line[:300]}")
                    if line:
                        self._event(json.loads(line))
        except httpx.TransportError:
            pass  # the server went away

    def _event(self, event: dict[str, Any]) -> None:
        kind, obj = event["type"], event["object"]
        if kind == "ERROR":
            if obj.get("code") == 410:
                self.relists += 1
                self.errors.append("410")  # the caller relists
            else:
                self.errors.append(f"error event: {obj}")
            return
        revision = int(obj["metadata"]["resourceVersion"])
        if kind == "BOOKMARK":
            self.last = max(self.last, revision)
            return
        if revision <= self.last:
            self.errors.append(
                f"duplicate or out of order: {kind} {obj['metadata']['name']} at {revision} <= {self.last}"
            )
            return
        self.last = revision
        name = obj["metadata"]["name"]
        if kind == "DELETED":
            self.state.pop(name, None)
        else:
            self.state[name] = revision
