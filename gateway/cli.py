"""`protokube serve`: the API server — the HTTP gateway plus its storage.

It serves HTTPS (by default on 127.0.0.1:6443) with certificates it makes in --data-dir on first
start, and writes an admin kubeconfig there. Plain HTTP only on an --insecure-listen address on
loopback, where every request acts as a member of system:masters. By default the storage service
runs embedded, as a child process listening on an owner-only Unix socket in --data-dir (its own
CPU core: the gateway and storage do not share one Python interpreter). ``--storage ADDRESS``
points the gateway at a running storage service or a real etcd instead.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import re
import signal
import socket
import subprocess
import sys
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from protokube import heap
from protokube.cliargs import DEFAULT_DATA_DIR, Parser, directory, host_port, is_loopback, lock_data_dir
from protokube.gateway import runtimeconfig
from protokube.gateway.admission import options as admission_options
from protokube.gateway.admission.options import AdmissionSettings
from protokube.gateway.controllers.leadertiming import LEASE_DURATION, RENEW_DEADLINE, RETRY_PERIOD, LeaderElection
from protokube.gateway.controllers.selection import DEFAULT as DEFAULT_CONTROLLERS
from protokube.gateway.controllers.selection import ControllerSelection
from protokube.gateway.embedded import EmbeddedStorage
from protokube.gateway.registry.allocators.flags import (
    DEFAULT_NODE_PORTS,
    DEFAULT_SERVICE_CIDR,
    node_port_range,
    service_cidr,
)
from protokube.gateway.runtimeconfig import RuntimeConfig, RuntimeConfigError
from protokube.gateway.serving import SERVERS, TLSSettings
from protokube.gateway.workers import start_workers, stop_workers
from protokube.schema.wellknown import parse_duration

if TYPE_CHECKING:
    from protokube.gateway.auth.authentication import TokenFile
    from protokube.gateway.auth.tokens.keys import SigningKeys
    from protokube.gateway.auth.tokens.request import Issuer
    from protokube.gateway.storage.encryption.config import Encryption
    from protokube.gateway.storage.etcd import ClientTLS

DEFAULT_ISSUER = "https://kubernetes.default.svc.cluster.local"
WATCH_DRAIN_SECONDS = 0.5
log = logging.getLogger("protokube.serve")


def parse_args(argv: list[str], prog: str = "protokube serve") -> argparse.Namespace:
    p = Parser(prog, (__doc__ or "").split("\n\n")[0])
    p.add_argument("--listen", default="127.0.0.1:6443", type=host_port, help="HOST:PORT of the HTTPS API")
    p.add_argument(
        "--insecure-listen",
        type=loopback_host_port,
        metavar="HOST:PORT",
        help="also serve plain HTTP here (loopback only); every request on it acts as system:masters",
    )
    p.add_argument(
        "--data-dir", type=directory, default=str(DEFAULT_DATA_DIR), help="certificates, kubeconfig, storage"
    )
    p.add_argument(
        "--storage",
        help="HOST:PORT or unix://PATH of an etcd-v3 API endpoint, or the members of an etcd cluster as "
        "HOST:PORT,HOST:PORT,... (instead of the embedded storage)",
    )
    p.add_argument("--etcd-cafile", type=Path, help="CA of the storage's serving certificate (TLS to --storage)")
    p.add_argument("--etcd-certfile", type=Path, help="client certificate for mutual TLS with --storage")
    p.add_argument("--etcd-keyfile", type=Path, help="key of --etcd-certfile")
    p.add_argument("--tls-cert-file", type=Path, help="serving certificate (default: made in --data-dir)")
    p.add_argument("--tls-private-key-file", type=Path, help="key of --tls-cert-file")
    p.add_argument("--client-ca-file", type=Path, help="also accept client certificates signed by this CA")
    p.add_argument("--tls-san", action="append", default=[], help="another name for the serving certificate")
    p.add_argument("--token-auth-file", type=token_file, help='static bearer tokens: token,user,uid[,"group1,group2"]')
    p.add_argument(
        "--service-account-issuer",
        action="append",
        metavar="URL",
        help=f"issuer of service account tokens (repeatable: tokens name the first, any is accepted; "
        f"default {DEFAULT_ISSUER})",
    )
    p.add_argument(
        "--service-account-jwks-uri",
        default="",
        metavar="URL",
        help="jwks_uri in the issuer discovery document (default: https://<this server>/openid/v1/jwks)",
    )
    p.add_argument(
        "--api-audiences",
        type=lambda text: tuple(a.strip() for a in text.split(",") if a.strip()),
        metavar="AUDIENCE,...",
        help="audiences of tokens meant for this server (default: the service account issuers)",
    )
    p.add_argument(
        "--anonymous-auth",
        type=_bool_flag,
        default=True,
        metavar="BOOL",
        help="requests without credentials act as system:anonymous",
    )
    p.add_argument(
        "--authorization-mode",
        type=authorization_modes,
        default=("RBAC",),
        metavar="MODE,...",
        help="RBAC (default), AlwaysAllow or AlwaysDeny, tried in order; system:masters may do everything",
    )
    p.add_argument(
        "--compaction-retention",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="history the embedded storage keeps (etcd's 5 minutes by default)",
    )
    p.add_argument(
        "--quota-backend-bytes",
        type=int,
        default=0,
        metavar="N",
        help="the embedded storage's size limit: writes beyond it fail with NOSPACE, as etcd's (0: 2 GiB)",
    )
    p.add_argument(
        "--storage-in-memory",
        action="store_true",
        help="the embedded storage keeps its database in memory, lost when it stops (tests)",
    )
    p.add_argument(
        "--etcd-compaction-interval",
        type=go_duration,
        default=300.0,
        metavar="DURATION",
        help="how often the gateways compact an external --storage (5m, 30s, 0 to never), keeping one interval",
    )
    p.add_argument(
        "--watch-cache-window",
        type=int,
        default=10_000,
        metavar="EVENTS",
        help="recent events each watch cache keeps; older watch starts get 410 Gone",
    )
    p.add_argument(
        "--bookmark-interval",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="seconds between periodic watch bookmarks",
    )
    p.add_argument(
        "--storage-initialization-timeout",
        type=go_duration,
        default=60.0,
        metavar="DURATION",
        help="how long to wait for the storage at start, trying again and logging why (1m, 30s)",
    )
    p.add_argument(
        "--request-timeout",
        type=go_duration,
        default=60.0,
        metavar="DURATION",
        help="longest time a request that is not long-running may take (1m, 30s, 0 for none); then 504",
    )
    p.add_argument(
        "--min-request-timeout",
        type=non_negative_int,
        default=1800,
        metavar="SECONDS",
        help="a watch without timeoutSeconds lasts this times a random factor in [1, 2)",
    )
    p.add_argument(
        "--feature-gates",
        type=feature_gates,
        default=dict(KNOWN_GATES),
        metavar="GATE=BOOL,...",
        help="CBORServingAndStorage=true serves and accepts CBOR; AllowUnsafeMalformedObjectDeletion=true lets "
        "DELETE ignoreStoreReadErrorWithClusterBreakingPotential remove corrupt objects; ClusterTrustBundle=true "
        "serves certificates.k8s.io/v1alpha1 clustertrustbundles when --runtime-config enables them "
        "(all off, as in 1.32)",
    )
    p.add_argument(
        "--encryption-provider-config",
        type=encryption_config,
        metavar="FILE",
        help="an EncryptionConfiguration: which resources are encrypted at rest, with which providers and keys",
    )
    p.add_argument(
        "--leader-elect-lease-duration",
        type=float,
        default=LEASE_DURATION,
        metavar="SECONDS",
        help="how long other gateways wait before taking over the controllers' Lease",
    )
    p.add_argument(
        "--leader-elect-renew-deadline",
        type=float,
        default=RENEW_DEADLINE,
        metavar="SECONDS",
        help="how long the leader keeps its controllers running while it cannot renew",
    )
    p.add_argument(
        "--leader-elect-retry-period",
        type=float,
        default=RETRY_PERIOD,
        metavar="SECONDS",
        help="how often the Lease is renewed or tried",
    )
    p.add_argument(
        "--controllers",
        type=controller_selection,
        default=DEFAULT_CONTROLLERS,
        metavar="NAME,...",
        help="the controllers kube-controller-manager would run: * for all, NAME to add one, -NAME to leave one "
        "out (*,-root-ca-certificate-publisher-controller)",
    )
    p.add_argument(
        "--runtime-config",
        type=runtime_config,
        default=RuntimeConfig(),
        metavar="GROUP/VERSION=BOOL,...",
        help="turn group versions off or on: api/all=false,api/v1=true,apps/v1=true (all on by default, but "
        "the example group example.protokube.dev/v1)",
    )
    p.add_argument(
        "--gateways",
        type=int,
        default=1,
        metavar="N",
        help="gateway processes sharing the listening addresses (SO_REUSEPORT), to use N cores",
    )
    p.add_argument(
        "--service-cluster-ip-range",
        type=service_cidr,
        default=DEFAULT_SERVICE_CIDR,
        metavar="CIDR",
        help="the range Service cluster IPs come from",
    )
    p.add_argument(
        "--service-node-port-range",
        type=node_port_range,
        default=DEFAULT_NODE_PORTS,
        metavar="FIRST-LAST",
        help="the range Service node ports come from",
    )
    p.add_argument("--gateway-index", type=int, default=0, help=argparse.SUPPRESS)  # a worker of --gateways
    p.add_argument(
        "--max-requests-inflight",
        type=int,
        default=400,
        metavar="N",
        help="read-only requests at once (with the next flag: the seats API Priority and Fairness shares out)",
    )
    p.add_argument(
        "--max-mutating-requests-inflight", type=int, default=200, metavar="N", help="mutating requests at once"
    )
    p.add_argument(
        "--enable-priority-and-fairness",
        type=_bool_flag,
        default=True,
        metavar="BOOL",
        help="API Priority and Fairness (false: the plain max-in-flight limits, 429 beyond them)",
    )
    p.add_argument(
        "--enable-debug-wire",
        action="store_true",
        help="serve the wire explorer at /debug/wire (a page for studying the protobuf encoding)",
    )
    admission_options.add_arguments(p)
    p.add_argument(
        "--http-server",
        choices=SERVERS,
        default="native",
        help="the HTTP server: native (default: ours, on httptools, with HTTP/2 over TLS) or hypercorn "
        "(no client certificates, no Go reason phrases; see the README's HTTP servers)",
    )
    p.add_argument("--access-log", action="store_true")
    p.add_argument("--log-level", default="WARNING", choices=["DEBUG", "INFO", "WARNING", "ERROR"], type=str.upper)
    args = p.parse_args(argv)
    if (args.tls_cert_file is None) != (args.tls_private_key_file is None):
        p.error("--tls-cert-file and --tls-private-key-file go together")
    if args.gateways < 1:
        p.error("--gateways must be at least 1")
    if args.gateways > 1 and (args.listen.endswith(":0") or (args.insecure_listen or "").endswith(":0")):
        p.error("--gateways needs fixed ports (all gateways bind the same ones)")
    if not 0 < args.leader_elect_retry_period < args.leader_elect_renew_deadline < args.leader_elect_lease_duration:
        p.error("leader election needs 0 < --leader-elect-retry-period < renew deadline < lease duration")
    if args.max_requests_inflight < 0 or args.max_mutating_requests_inflight < 0:
        p.error("--max-requests-inflight and --max-mutating-requests-inflight must not be negative")
    if (args.etcd_certfile is None) != (args.etcd_keyfile is None):
        p.error("--etcd-certfile and --etcd-keyfile go together")
    if args.storage is None and (args.etcd_cafile or args.etcd_certfile):
        p.error("--etcd-cafile, --etcd-certfile and --etcd-keyfile are for a --storage address")
    if args.storage is not None and args.storage_in_memory:
        p.error("--storage-in-memory is for the embedded storage, not a --storage address")
    return args


KNOWN_GATES = {"CBORServingAndStorage": False, "AllowUnsafeMalformedObjectDeletion": False, "ClusterTrustBundle": False}
AUTHORIZATION_MODES = ("RBAC", "AlwaysAllow", "AlwaysDeny")


def _bool_flag(text: str) -> bool:
    if text.lower() in ("true", "1"):
        return True
    if text.lower() in ("false", "0"):
        return False
    raise argparse.ArgumentTypeError(f"not a boolean: {text!r}")


def feature_gates(text: str) -> dict[str, bool]:
    """--feature-gates A=true,B=false (unknown gates and values are errors, as upstream)."""
    gates = dict(KNOWN_GATES)
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, _, value = item.partition("=")
        if name not in KNOWN_GATES or value.lower() not in ("true", "false"):
            raise argparse.ArgumentTypeError(f"invalid feature gate {item!r}; known gates: {', '.join(KNOWN_GATES)}")
        gates[name] = value.lower() == "true"
    return gates


def controller_selection(text: str) -> ControllerSelection:
    try:
        return ControllerSelection.parse(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def loopback_host_port(text: str) -> str:
    """The insecure port may only be on loopback: no one else must reach an unauthenticated port."""
    if not is_loopback(host_port(text).rpartition(":")[0]):
        raise argparse.ArgumentTypeError(f"must be a loopback address, got {text!r}")
    return text


def authorization_modes(text: str) -> tuple[str, ...]:
    modes = tuple(m.strip() for m in text.split(",") if m.strip())
    for mode in modes:
        if mode not in AUTHORIZATION_MODES:
            raise argparse.ArgumentTypeError(
                f"authorization-mode {mode!r} is not supported; choose from {', '.join(AUTHORIZATION_MODES)}"
            )
    if not modes or len(set(modes)) != len(modes):
        raise argparse.ArgumentTypeError("authorization-mode must name each mode once")
    return modes


def non_negative_int(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"not a non-negative integer: {text!r}")
    return int(text)


def go_duration(text: str) -> float:
    """Seconds from a Go duration ("5m0s", "30s", "1h", "1.5s", "0") or a plain number of seconds."""
    if re.fullmatch(r"\d+(\.\d+)?", text):
        return float(text)
    try:
        nanos = parse_duration(text)
    except ValueError:
        nanos = -1
    if nanos < 0:
        raise argparse.ArgumentTypeError(f"not a duration: {text!r} (e.g. 5m, 30s, 1h)")
    return nanos / 1e9


def runtime_config(text: str) -> RuntimeConfig:
    try:
        return runtimeconfig.parse(text)
    except RuntimeConfigError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def encryption_config(text: str) -> Encryption:
    from protokube.gateway.storage.encryption.config import EncryptionConfigError, load  # when the flag is given

    try:
        return load(Path(text))
    except EncryptionConfigError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def token_file(text: str) -> TokenFile:
    from protokube.gateway.auth.authentication import TokenFile  # when the flag is given

    try:
        return TokenFile.load(Path(text))
    except (OSError, ValueError) as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def token_issuer(args: argparse.Namespace, keys: SigningKeys) -> Issuer:
    """Service account tokens: the signing keys, the issuers and audiences."""
    from protokube.gateway.auth.tokens.request import Issuer  # see run

    issuers = tuple(args.service_account_issuer or (DEFAULT_ISSUER,))
    return Issuer(keys, issuers, args.api_audiences or issuers, args.service_account_jwks_uri)


def storage_tls(args: argparse.Namespace) -> ClientTLS | None:
    from protokube.gateway.storage.etcd import ClientTLS  # see run

    if args.etcd_cafile is None and args.etcd_certfile is None:
        return None
    return ClientTLS(args.etcd_cafile, args.etcd_certfile, args.etcd_keyfile)


class Credentials(NamedTuple):
    tls: TLSSettings  # the secure port's
    admin_kubeconfig: str
    signing_keys: SigningKeys  # of service account tokens


def credentials(args: argparse.Namespace) -> Future[Credentials]:
    """The serving certificates, the admin kubeconfig and the token signing keys (made in the data
    dir on first start), on a thread while the server's modules import: generating the RSA signing
    key takes ~0.15 s, without the GIL."""
    pool = ThreadPoolExecutor(1, thread_name_prefix="credentials")
    made = pool.submit(_credentials, args)
    pool.shutdown(wait=False)
    return made


def _credentials(args: argparse.Namespace) -> Credentials:
    from protokube.gateway.auth.tokens import keys  # cryptography: imported on this thread

    tls, admin_kubeconfig = transport(args)
    return Credentials(tls, admin_kubeconfig, keys.ensure(args.data_dir / "pki"))


def transport(args: argparse.Namespace) -> tuple[TLSSettings, str]:
    """The TLS settings of the secure port, and the admin kubeconfig for it."""
    from protokube.gateway.security import certs, kubeconfig  # cryptography: see credentials

    files = certs.ensure(args.data_dir / "pki", tuple(args.tls_san))
    client_ca = files.ca.cert
    if args.client_ca_file is not None:  # ours (for the admin kubeconfig) and theirs
        client_ca = args.data_dir / "pki" / "client-ca-bundle.crt"
        client_ca.write_bytes(files.ca.cert.read_bytes() + args.client_ca_file.read_bytes())
    cert, key = files.serving.cert, files.serving.key
    ca_pem: bytes | None = files.ca.cert.read_bytes()
    if args.tls_cert_file is not None:
        cert, key, ca_pem = args.tls_cert_file, args.tls_private_key_file, None  # trusted as the system trusts it
    admin_cert, admin_key = files.admin.load()
    server = f"https://{args.listen}"
    config = kubeconfig.kubeconfig(
        server, ca_pem=ca_pem, cert_pem=certs.pem(admin_cert), key_pem=certs.key_pem(admin_key)
    )
    return TLSSettings(str(cert), str(key), str(client_ca)), config


async def run(
    args: argparse.Namespace,
    admission: AdmissionSettings,
    embedded: EmbeddedStorage | None,
    made: Future[Credentials],
) -> None:
    """Build the server and serve until SIGTERM or SIGINT; ``main`` launched the embedded storage (if
    any) and the credentials' thread, which work while this imports the server's modules."""
    from protokube.gateway.app import APIServer, Settings, create_app
    from protokube.gateway.negotiation.negotiate import Formats
    from protokube.gateway.security import kubeconfig
    from protokube.gateway.serving import listen_socket, serve_app
    from protokube.gateway.storage.compactor import run_compactor
    from protokube.gateway.storage.endpoints import EndpointError
    from protokube.gateway.storage.etcd import EtcdBackend
    from protokube.schema import descriptors
    from protokube.schema.registry import build

    storage = args.storage if embedded is None else embedded.address
    supervisor: asyncio.Task[None] | None = None
    try:
        backend = EtcdBackend(storage, storage_tls(args))
    except EndpointError as err:
        raise SystemExit(f"protokube: --storage: {err}") from None
    shared = args.gateways > 1 or args.gateway_index > 0  # one of several gateways on these addresses
    workers: list[subprocess.Popen[bytes]] = []
    try:
        tls, admin_config, signing_keys = made.result()
        settings = Settings(
            watch_cache_window=args.watch_cache_window,
            bookmark_interval=args.bookmark_interval,
            formats=Formats(cbor=args.feature_gates["CBORServingAndStorage"]),
            unsafe_corrupt_object_deletion=args.feature_gates["AllowUnsafeMalformedObjectDeletion"],
            feature_gates=frozenset(gate for gate, on in args.feature_gates.items() if on),
            anonymous_auth=args.anonymous_auth,
            token_file=args.token_auth_file,
            service_account_tokens=token_issuer(args, signing_keys),
            root_ca=(args.data_dir / "pki" / "ca.crt").read_bytes(),
            authorization_modes=args.authorization_mode,
            encryption=args.encryption_provider_config,
            service_cluster_ip_range=args.service_cluster_ip_range,
            service_node_port_range=args.service_node_port_range,
            request_timeout=args.request_timeout,
            min_request_timeout=args.min_request_timeout,
            identity=f"{socket.gethostname()}_{args.listen}" + (f"#{args.gateway_index}" if shared else ""),
            controllers=args.controllers,
            leader_election=LeaderElection(
                args.leader_elect_lease_duration, args.leader_elect_renew_deadline, args.leader_elect_retry_period
            ),
            max_requests_inflight=args.max_requests_inflight,
            max_mutating_requests_inflight=args.max_mutating_requests_inflight,
            priority_and_fairness=args.enable_priority_and_fairness,
            debug_wire=args.enable_debug_wire,
            admission=admission,
        )
        registry = build(descriptors.all_messages())
        args.runtime_config.apply(registry, args.feature_gates)
        server = APIServer(backend, args.listen, registry, settings)
        if embedded is not None:
            embedded.wait_listening()
            supervisor = asyncio.create_task(embedded.supervise())
        await backend.wait_available(args.storage_initialization_timeout)
        await server.start()
        compactor = None
        if embedded is None and args.etcd_compaction_interval > 0:
            compactor = asyncio.create_task(run_compactor(backend, args.etcd_compaction_interval))
        shutdown = asyncio.Event()

        def stop() -> None:
            server.close_watches()  # watch streams end now (a moment to write their last chunk) ...
            loop.call_later(WATCH_DRAIN_SECONDS, shutdown.set)  # ... then the graceful shutdown of the rest

        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop)
        sock = listen_socket(args.listen, reuse_port=shared)
        insecure = listen_socket(args.insecure_listen, reuse_port=shared) if args.insecure_listen else None
        app = create_app(server)
        heap.settle()  # what startup built is frozen (protokube/heap.py)
        if args.gateway_index > 0:  # a worker: the first process speaks for all
            await serve_app(
                app, sock, shutdown, tls=tls, insecure=insecure, access_log=args.access_log, server=args.http_server
            )
            await server.stop()
            return
        config_path = kubeconfig.write(args.data_dir / "kubeconfig", admin_config)
        workers = start_workers(args.argv, storage, args.gateways, compaction=embedded is None)
        if insecure is not None:
            print(
                f"WARNING: serving plain HTTP without authentication on http://{args.insecure_listen}: "
                "every request there acts as system:masters",
                flush=True,
            )
        print(f"protokube serving on https://{args.listen} (storage {storage})", flush=True)
        print(f"export KUBECONFIG={config_path}", flush=True)
        await serve_app(
            app, sock, shutdown, tls=tls, insecure=insecure, access_log=args.access_log, server=args.http_server
        )
        if compactor is not None:
            compactor.cancel()
        await server.stop()
    finally:
        stop_workers(workers)
        if embedded is not None:
            embedded.stop()  # here, while the loop runs: its executor waits on the child (supervise)
        if supervisor is not None:
            supervisor.cancel()


def gateway_main(argv: list[str]) -> int:
    """`protokube gateway --storage HOST:PORT`: the HTTP gateway alone, against running storage."""
    asks_help = any(a in ("-h", "--help") for a in argv)
    if not asks_help and not any(a == "--storage" or a.startswith("--storage=") for a in argv):
        print("protokube gateway: --storage HOST:PORT is required (or use protokube serve)", file=sys.stderr)
        return 2
    return main(argv, prog="protokube gateway")


def main(argv: list[str], prog: str = "protokube serve") -> int:
    args = parse_args(argv, prog)
    args.argv = argv
    logging.basicConfig(level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    os.chmod(args.data_dir, 0o700)
    if args.gateway_index == 0:  # workers of --gateways share the first process's data dir
        lock_data_dir(args.data_dir, prog)
    admission = admission_options.settings(args)  # wrong flags stop the start before anything runs
    embedded = None
    if args.storage is None:
        embedded = EmbeddedStorage(
            args.data_dir, args.compaction_retention, args.quota_backend_bytes, in_memory=args.storage_in_memory
        )
        embedded.launch()  # it starts on another core while this process imports and builds the server
    try:
        made = credentials(args)
        import uvloop  # with the server's modules (run): after the launch

        from protokube.gateway.lanes import LaneLoop

        # uvloop (a faster event loop for HTTP and gRPC alike) with APF's lanes (gateway/lanes.py)
        uvloop.run(run(args, admission, embedded, made), loop_factory=LaneLoop)
    except (OSError, RuntimeError) as err:
        print(f"{prog}: {err}", file=sys.stderr)
        return 1
    finally:
        if embedded is not None:
            embedded.stop()  # also when the start failed before run
    return 0
