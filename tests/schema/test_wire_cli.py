"""`protokube wire`: annotated protobuf for people studying the wire format."""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

from protokube.schema import envelope, jsondecode
from protokube.schema.envelope import MAGIC

ROOT = Path(__file__).parents[2]


def _run(data: bytes, *args: str) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-m", "protokube", "wire", *args],
        input=data,
        capture_output=True,
        timeout=60,
        cwd=ROOT,
        check=False,
    )
    return subprocess.CompletedProcess(result.args, result.returncode, result.stdout.decode(), result.stderr.decode())


def pod_bytes() -> bytes:
    pod = jsondecode.decode(
        {
            "metadata": {"name": "web", "namespace": "shop", "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27", "ports": [{"containerPort": 80}]}]},
        },
        "k8s.io.api.core.v1.Pod",
    ).message
    return envelope.encode(pod, "v1", "Pod")


def test_annotates_a_pod_written_by_the_project() -> None:
    result = _run(pod_bytes())
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "magic k8s\\x00" in out
    assert 'apiVersion: string = "v1"' in out and 'kind: string = "Pod"' in out
    assert "object Pod (k8s.io.api.core.v1.Pod)" in out
    assert 'name: string = "web"' in out and 'image: string = "nginx:1.27"' in out
    assert "containerPort: int32 = 80" in out
    assert "[1] LEN    metadata: k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta" in out
    first = out.splitlines()[1]
    assert first.startswith("000000")  # byte offsets


def test_shows_unknown_fields_of_a_hand_built_envelope() -> None:
    raw = b"\x0a\x05\x0a\x03abc" + b"\xf8\x06\x07"  # metadata{name:"abc"}, then field 111 varint 7
    unknown = (
        b"\x0a\x09\x0a\x02v1\x12\x03Pod"  # typeMeta
        + b"\x12"
        + bytes([len(raw)])
        + raw
        + b"\x2a\x03xyz"
    )  # runtime.Unknown has no field 5
    out = _run(MAGIC + unknown).stdout
    assert 'name: string = "abc"' in out
    assert "[111] VARINT (unknown field) = 7" in out
    assert "[5] LEN    (unknown field) = 3 bytes 78 79 7a" in out


def test_watch_stream_frames_are_opened() -> None:
    obj = pod_bytes()

    def frame(event_type: str) -> bytes:
        object_field = b"\x0a" + _varint(len(obj)) + obj
        event = (
            b"\x0a"
            + bytes([len(event_type)])
            + event_type.encode()
            + b"\x12"
            + _varint(len(object_field))
            + object_field
        )
        return struct.pack(">I", len(event)) + event

    out = _run(frame("ADDED") + frame("DELETED")).stdout
    assert out.count("frame: 4-byte big-endian length") == 2
    assert 'type: string = "ADDED"' in out and 'type: string = "DELETED"' in out
    assert out.count("object Pod (k8s.io.api.core.v1.Pod)") == 2


def test_truncated_input_reports_the_offset() -> None:
    result = _run(pod_bytes()[:-10])
    assert result.returncode == 1
    assert "protokube wire: offset" in result.stderr


def test_plain_message_with_type() -> None:
    pod = envelope.unwrap(pod_bytes()).raw
    out = _run(pod, "--type", "Pod").stdout
    assert 'name: string = "web"' in out


def _varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)
