"""protokube.testing.Server in a unittest.TestCase (no pytest fixtures): one server for the class,
in-memory storage."""

from __future__ import annotations

import unittest

from protokube.testing import Server


class TestWithAServer(unittest.TestCase):
    api: Server

    @classmethod
    def setUpClass(cls) -> None:
        cls.api = cls.enterClassContext(Server(storage="memory"))

    def test_namespaces(self) -> None:
        with self.api.client() as client:
            client.post("/api/v1/namespaces", json={"metadata": {"name": "unit"}}).raise_for_status()
            names = [n["metadata"]["name"] for n in client.get("/api/v1/namespaces").json()["items"]]
        self.assertIn("unit", names)
