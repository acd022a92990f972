"""The Watch service: one bidirectional stream carries any number of watches."""

from __future__ import annotations

import asyncio

import grpc

from protokube.gen.etcdserverpb import rpc_pb2
from protokube.server.mvcc import range_end
from protokube.server.records import watch_response
from protokube.server.rpc import require_valid
from protokube.server.watchhub import Watcher, WatchHub, WatchStream

FilterType = rpc_pb2.WatchCreateRequest.FilterType

# etcd's mvcc errors, sent as cancel_reason of a refused create request.
DUPLICATE_WATCH_ID = "mvcc: duplicate watch ID provided on the WatchStream"
EMPTY_WATCHER_RANGE = "mvcc: watcher range is empty"
REFUSED_WATCH_ID = -1


class WatchService:
    def __init__(self, hub: WatchHub) -> None:
        self.hub = hub

    async def Watch(self, request_iterator, context: grpc.aio.ServicerContext) -> None:
        stream = self.hub.open_stream()
        sender = asyncio.get_running_loop().create_task(self._send_loop(stream, context))
        try:
            while True:
                request = await context.read()
                if request is grpc.aio.EOF:
                    break
                require_valid(request)
                self._handle(stream, request)
            # The client closed its side: keep sending until it goes away (as etcd does).
            await sender
        finally:
            self.hub.remove_stream(stream)
            sender.cancel()

    async def _send_loop(self, stream: WatchStream, context: grpc.aio.ServicerContext) -> None:
        while True:
            response = await stream.next_response()
            await context.write(response)
            stream.written(response)

    def _handle(self, stream: WatchStream, request: rpc_pb2.WatchRequest) -> None:
        kind = request.WhichOneof("request_union")
        if kind == "create_request":
            self._create(stream, request.create_request)
        elif kind == "cancel_request":
            w = stream.watchers.get(request.cancel_request.watch_id)
            if w is not None:  # etcd ignores unknown IDs
                self.hub.remove(w)
                stream.send(watch_response(self.hub.store.header_bytes(self.hub.rev), w.id, canceled=True))
        elif kind == "progress_request":
            self.hub.request_progress(stream)

    def _create(self, stream: WatchStream, req: rpc_pb2.WatchCreateRequest) -> None:
        header = self.hub.store.header_bytes(self.hub.rev)
        end = range_end(req.range_end)
        # A refused create is answered with watch_id -1 and uses up no ID, as etcd does.
        refusal = None
        if end not in (None, b"") and end <= req.key:
            refusal = EMPTY_WATCHER_RANGE
        elif req.watch_id and req.watch_id in stream.watchers:
            refusal = DUPLICATE_WATCH_ID
        if refusal is not None:
            stream.send(watch_response(header, REFUSED_WATCH_ID, created=True, canceled=True, cancel_reason=refusal))
            return
        watch_id = req.watch_id or stream.new_id()
        w = Watcher(
            stream,
            watch_id,
            req.key,
            end,
            prev_kv=req.prev_kv,
            no_put=FilterType.NOPUT in req.filters,
            no_delete=FilterType.NODELETE in req.filters,
            progress_notify=req.progress_notify,
            fragment=req.fragment,
        )
        stream.send(watch_response(header, watch_id, created=True))
        self.hub.add(w, req.start_revision)
