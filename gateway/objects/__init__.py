"""Objects as the gateway handles them, whatever their schema.

A resource's ``Codec`` knows how its objects are stored, decoded and written: ``ProtoCodec`` for
kinds compiled from proto/ (stored as enveloped protobuf, as upstream stores built-in kinds) and
``JSONCodec`` for kinds whose schema arrives at run time (stored as JSON, as upstream stores custom
resources). Either way an object has ``metadata`` (a meta.v1 ObjectMeta message), so the generic
store, the watch cache, selectors and Tables never need to know which codec it came from.
An ``ObjectView`` is one object at one resourceVersion, with its encodings made once.
"""
