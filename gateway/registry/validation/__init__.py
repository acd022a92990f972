"""Validation of every object written: metadata (meta.py) and each kind's own rules (base.py).

One module per API group (core, apps, batch, ...) registers its validators with
``base.validator``; ``rules.validate`` runs them, every module of this package being imported there,
so a new group's rules need no other registration. A kind whose rules need a layer above the
registry (CEL, say) is validated in that layer and registered from the composition root (base.py).
This file imports nothing, so that the shared checks (common.py, meta.py) can be used without
loading every group's rules.
"""
