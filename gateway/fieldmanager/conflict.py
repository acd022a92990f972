"""The 409 an apply gets when it would change fields other managers own
(k8s.io/apimachinery/pkg/util/managedfields/internal/conflict.go)."""

from __future__ import annotations

import contextlib

from protokube.gateway import errors
from protokube.gateway.errors import StatusError
from protokube.gateway.fieldmanager.fieldpath import Path, path_string
from protokube.gateway.fieldmanager.managedfields import UPDATE, DecodeError, normalize_time, parse_identifier
from protokube.gateway.fieldmanager.merge import Conflicts
from protokube.gateway.fieldmanager.values import go_quote

FIELD_MANAGER_CONFLICT = "FieldManagerConflict"  # metav1.CauseTypeFieldManagerConflict


def print_manager(identifier: str) -> str:
    """upstream's printManager: ``"mgr"``, ``"mgr" using v1``, ``"mgr" with subresource "status" using v1``."""
    info = parse_identifier(identifier)
    if not info:
        return go_quote(identifier)
    text = go_quote(info.get("manager") or "")
    if info.get("subresource"):
        text += f" with subresource {go_quote(info['subresource'])}"
    if info.get("operation") == UPDATE:
        text += f" using {info.get('apiVersion') or ''}"
        if info.get("time"):
            with contextlib.suppress(DecodeError):
                text += f" at {normalize_time(info['time'])}"
    return text


def conflict_error(conflicts: Conflicts) -> StatusError:
    """upstream's NewConflictError: one cause per (manager, field)."""
    causes = [
        (FIELD_MANAGER_CONFLICT, f"conflict with {print_manager(manager)}", path_string(path))
        for manager, path in conflicts.conflicts
    ]
    return errors.apply_conflict(causes, conflict_message(conflicts.conflicts))


def conflict_message(conflicts: list[tuple[str, Path]]) -> str:
    """upstream's getConflictMessage."""
    if len(conflicts) == 1:
        manager, path = conflicts[0]
        return f"Apply failed with 1 conflict: conflict with {print_manager(manager)}: {path_string(path)}"
    by_manager: dict[str, list[Path]] = {}
    for manager, path in conflicts:
        by_manager.setdefault(manager, []).append(path)
    lines = []
    for manager in sorted(by_manager):
        lines.append(f"conflicts with {print_manager(manager)}:")
        lines.extend(f"- {path_string(path)}" for path in by_manager[manager])
    return f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
