"""Where the upstream facts come from: the four Kubernetes repositories and the packages we take.

Each repository is given as a directory (a checkout, or any tree with the repository's files) or
as ``GITDIR@REF`` (a bare or normal git repository and a tag), which is extracted with
``git archive`` into a temporary directory.
"""

from __future__ import annotations

import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

# The repositories, by the name they have below k8s.io/ in Go import paths.
REPOS = ("api", "apimachinery", "apiextensions-apiserver", "kube-aggregator")


@dataclass(frozen=True, slots=True)
class UpstreamPackage:
    """One upstream Go package with a generated.proto, and where its .proto goes here."""

    repo: str  # one of REPOS
    path: str  # inside the repository, e.g. "core/v1" or "pkg/apis/meta/v1"

    @property
    def import_path(self) -> str:
        """The Go import path, e.g. k8s.io/api/core/v1."""
        return f"k8s.io/{self.repo}/{self.path}"

    @property
    def proto_import(self) -> str:
        """The path upstream's .proto files import it by."""
        return f"{self.import_path}/generated.proto"

    @property
    def output(self) -> str:
        """Our file, relative to proto/: k8s/io/<repo with - as _>/<path>/types.proto."""
        return f"k8s/io/{self.repo.replace('-', '_')}/{self.path}/types.proto"

    @property
    def label(self) -> str:
        return f"{self.repo}/{self.path}"


def _api(*paths: str) -> tuple[UpstreamPackage, ...]:
    return tuple(UpstreamPackage("api", p) for p in paths)


# Every GA group version of the wire-fact table except admission/v1 and resource/v1, which
# Kubernetes 1.32 does not serve (apidiscovery/v2beta1 is in the table and is taken too), and
# certificates/v1alpha1 (ClusterTrustBundle, served when --runtime-config and its feature gate ask).
# runtime/schema has a generated.proto without messages: nothing to write.
PACKAGES: tuple[UpstreamPackage, ...] = (
    *_api(
        "admissionregistration/v1",
        "apidiscovery/v2",
        "apidiscovery/v2beta1",
        "apps/v1",
        "authentication/v1",
        "authorization/v1",
        "autoscaling/v1",
        "autoscaling/v2",
        "batch/v1",
        "certificates/v1",
        "certificates/v1alpha1",
        "coordination/v1",
        "core/v1",
        "discovery/v1",
        "events/v1",
        "flowcontrol/v1",
        "networking/v1",
        "node/v1",
        "policy/v1",
        "rbac/v1",
        "scheduling/v1",
        "storage/v1",
    ),
    UpstreamPackage("apimachinery", "pkg/api/resource"),
    UpstreamPackage("apimachinery", "pkg/apis/meta/v1"),
    UpstreamPackage("apimachinery", "pkg/runtime"),
    UpstreamPackage("apimachinery", "pkg/util/intstr"),
    UpstreamPackage("apiextensions-apiserver", "pkg/apis/apiextensions/v1"),
    UpstreamPackage("kube-aggregator", "pkg/apis/apiregistration/v1"),
)

# Packages whose generated.proto other packages import, though we write no file for them.
IMPORT_ONLY: tuple[UpstreamPackage, ...] = (UpstreamPackage("apimachinery", "pkg/runtime/schema"),)


@dataclass(frozen=True, slots=True)
class RepoSource:
    """A repository's tree on disk and what it was taken from (for the file headers)."""

    repo: str
    root: Path
    origin: str  # "v0.36.3", or the directory given


def open_repo(repo: str, spec: str, scratch: Path) -> RepoSource:
    """A repository from a directory or from GITDIR@REF (extracted below ``scratch``)."""
    if "@" in spec and not Path(spec).is_dir():
        git_dir, ref = spec.rsplit("@", 1)
        target = scratch / repo
        target.mkdir(parents=True)
        archive = subprocess.run(
            ["git", "--git-dir", git_dir, "archive", "--format=tar", ref],
            check=True,
            capture_output=True,
        ).stdout
        with tempfile.TemporaryFile() as tar_file:
            tar_file.write(archive)
            tar_file.seek(0)
            with tarfile.open(fileobj=tar_file) as tar:
                tar.extractall(target, filter="data")
        return RepoSource(repo, target, ref)
    root = Path(spec)
    if not root.is_dir():
        raise SystemExit(f"{repo}: {spec} is neither a directory nor GITDIR@REF")
    return RepoSource(repo, root, str(root))
