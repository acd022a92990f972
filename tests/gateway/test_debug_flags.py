"""/debug/flags/v as kube-apiserver's: PUT a number sets the log verbosity (the gateway's log
level), other methods 406, bad numbers 400 with klog's words; /debug/flags lists the flags."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from .helpers import GatewayProcess, eventually


@pytest.fixture(scope="module")
def own(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayProcess]:
    """A server of its own: its log level changes."""
    process = GatewayProcess(tmp_path_factory.mktemp("flags")).start()
    yield process
    process.kill()


def test_put_sets_the_verbosity(own: GatewayProcess) -> None:
    with own.client() as client:
        quiet = client.put("/debug/flags/v", content=b"0")
        assert quiet.status_code == 200
        assert quiet.headers["content-type"] == "text/plain"
        assert quiet.text == "successfully set klog.logging.verbosity to 0\n"
        assert not any("log verbosity set to 0" in line for line in own.log)  # WARNING and above only
        assert client.put("/debug/flags/v", content=b"2").status_code == 200
        assert eventually(lambda: any("INFO protokube.debugflags: log verbosity set to 2" in line for line in own.log))


@pytest.mark.parametrize(
    ("method", "body", "code", "text"),
    [
        ("GET", b"", 406, "unsupported http method\n"),
        ("POST", b"3", 406, "unsupported http method\n"),
        ("PUT", b"x", 400, 'failed set klog.logging.verbosity x: strconv.ParseInt: parsing "x": invalid syntax\n'),
        (
            "PUT",
            b"3\n",
            400,
            'failed set klog.logging.verbosity 3\n: strconv.ParseInt: parsing "3\\n": invalid syntax\n',
        ),
        (
            "PUT",
            b"9999999999",
            400,
            "failed set klog.logging.verbosity 9999999999: "
            'strconv.ParseInt: parsing "9999999999": value out of range\n',
        ),
    ],
)
def test_what_is_refused(client: httpx.Client, method: str, body: bytes, code: int, text: str) -> None:
    answer = client.request(method, "/debug/flags/v", content=body)
    assert (answer.status_code, answer.text) == (code, text)


def test_index_and_authorization(server: GatewayProcess, client: httpx.Client, tmp_path: Path) -> None:
    index = client.get("/debug/flags/")
    assert index.status_code == 200 and "<tr>v<br>" in index.text
    with server.secure_client() as anonymous:
        refused = anonymous.put("/debug/flags/v", content=b"4")
        assert refused.status_code == 403
        assert refused.json()["message"] == ('forbidden: User "system:anonymous" cannot put path "/debug/flags/v"')
