"""The wire explorer (``--enable-debug-wire``): a page at /debug/wire for studying the protobuf
encoding of what this server sends, and /debug/wire/decode, the JSON form of ``protokube wire``."""
