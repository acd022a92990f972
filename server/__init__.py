"""protokube storage: an etcd-v3-compatible gRPC service over embedded SQLite."""
