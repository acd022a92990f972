"""Where gets and lists are served from, and at which revision."""

from __future__ import annotations

from dataclasses import dataclass

from k8s.io.apimachinery.pkg.apis.meta.v1 import types_pb2 as meta

from gateway import errors
from gateway.context import RequestContext
from gateway.objects import ObjectView
from gateway.storage import keys
from gateway.storage.etcd import prefix_end


@dataclass
class Listed:
    items: list[ObjectView]
    list_meta: meta.ListMeta


async def read_object(ctx: RequestContext) -> ObjectView:
    rv = ctx.request.args.get("resourceVersion")
    if rv and not rv.isdigit():
        raise errors.bad_request(f'invalid resource version "{rv}"')
    return await ctx.store.get(ctx.namespace, ctx.info.name)


async def list_objects(ctx: RequestContext, all_items: bool = False) -> Listed:
    prefix = keys.collection_prefix(ctx.resource, ctx.namespace)
    result = await ctx.gateway.etcd.list(prefix, prefix_end(prefix))
    items = [ctx.store.view(kv) for kv in result.kvs]
    return Listed(items, meta.ListMeta(resourceVersion=str(result.revision)))
