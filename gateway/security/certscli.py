"""`protokube certs`: certificates signed by the server's CA (the one in --data-dir/pki).

- ``protokube certs issue USER --group G --days N``: a client certificate (CN = user, O = groups,
  as upstream's x509 authenticator reads them) written as USER.crt/USER.key, or with
  ``--kubeconfig FILE`` a kubeconfig carrying it for ``--server``;
- ``protokube certs serving NAME --san HOST``: a serving certificate, e.g. for a storage service
  listening on another address (mutual TLS with the gateway, whose client certificate comes from
  ``issue``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from protokube.cliargs import DEFAULT_DATA_DIR, Parser
from protokube.gateway.security import certs, kubeconfig


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = Parser("protokube certs", __doc__ or "")
    commands = p.add_subparsers(dest="command", required=True, parser_class=argparse.ArgumentParser)
    issue = commands.add_parser("issue", help="a client certificate for a user")
    issue.add_argument("user")
    issue.add_argument("--group", action="append", default=[], help="a group of the user (repeatable)")
    issue.add_argument("--kubeconfig", type=Path, help="write a kubeconfig carrying the certificate here")
    issue.add_argument("--server", default="https://127.0.0.1:6443", help="the API server URL for --kubeconfig")
    serving = commands.add_parser("serving", help="a serving certificate")
    serving.add_argument("name", help="the certificate's common name")
    serving.add_argument("--san", action="append", default=[], help="a host name or IP it serves (repeatable)")
    for sub in (issue, serving):
        sub.add_argument("--days", type=int, default=certs.LEAF_DAYS)
        sub.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR, help="where the CA is (pki/ca.crt)")
        sub.add_argument("--out", type=Path, default=Path(), help="directory of NAME.crt and NAME.key")
    args = p.parse_args(argv)
    if args.days <= 0:
        p.error("--days must be positive")
    if args.command == "serving" and not args.san:
        p.error("serving certificates need at least one --san")
    return args


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    ca_pair = certs.Pair(args.data_dir / "pki" / "ca.crt", args.data_dir / "pki" / "ca.key")
    if not ca_pair.cert.exists() or not ca_pair.key.exists():
        print(f"protokube certs: no CA in {args.data_dir / 'pki'} (start `protokube serve` once)", file=sys.stderr)
        return 1
    ca = ca_pair.load()
    if args.command == "issue":
        cert, key = certs.issue_client(ca, args.user, tuple(args.group), args.days)
        name = args.user
        if args.kubeconfig is not None:
            text = kubeconfig.kubeconfig(
                args.server,
                ca_pem=certs.pem(ca[0]),
                cert_pem=certs.pem(cert),
                key_pem=certs.key_pem(key),
                user=args.user,
            )
            print(kubeconfig.write(args.kubeconfig, text))
            return 0
    else:
        cert, key = certs.issue_serving(ca, tuple(args.san), args.days, common_name=args.name)
        name = args.name
    args.out.mkdir(parents=True, exist_ok=True)
    safe = name.replace(":", "_").replace("/", "_")
    (args.out / f"{safe}.crt").write_bytes(certs.pem(cert))
    certs.write_private(args.out / f"{safe}.key", certs.key_pem(key))
    print(args.out / f"{safe}.crt")
    print(args.out / f"{safe}.key")
    return 0
