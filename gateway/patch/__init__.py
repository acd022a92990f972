"""PATCH as kube-apiserver 1.32 applies it: JSON patch, JSON merge patch and strategic merge patch on an
object's JSON form (plain dicts and lists, as ``codec.to_dict`` gives them).

Entry point: ``apply_patch``; see ``dispatch`` for the contract and ``jsonpatch``, ``mergepatch`` and
``strategic`` for each format's upstream semantics.
"""
