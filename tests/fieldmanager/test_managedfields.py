"""managedFields entries: decoding, validation, identifiers, encoding order, the conflict error and the
options checks (apimachinery internal/managedfields_test.go, conflict_test.go, capmanagers_test.go;
apimachinery meta/v1/validation; apiserver handlers' prefixFromUserAgent)."""

from __future__ import annotations

import pytest
import yaml

import protokube.gateway.fieldmanager.managedfields as managedfields
import protokube.gateway.fieldmanager.options as options
from protokube.gateway import errors
from protokube.gateway.fieldmanager.conflict import conflict_error
from protokube.gateway.fieldmanager.managedfields import DecodeError, build_manager_identifier
from protokube.gateway.fieldmanager.merge import Conflicts

from .helpers import P

VALID = {
    "apiVersion": "v1",
    "fieldsType": "FieldsV1",
    "fieldsV1": {"f:field": {}},
    "manager": "foo",
    "operation": "Apply",
}


def _without(name):
    return {k: v for k, v in VALID.items() if k != name}


@pytest.mark.parametrize(
    ("entry", "message"),
    [  # TestHasFieldsType, TestHasAPIVersion, TestHasOperation
        ({**VALID, "fieldsType": "FieldsV2"}, 'invalid fieldsType "FieldsV2" in managed fields entry 0'),
        (_without("fieldsType"), "missing fieldsType in managed fields entry 0"),
        (_without("apiVersion"), "apiVersion must not be empty"),
        ({**VALID, "operation": "Invalid"}, "operation must be `Apply` or `Update`"),
        (_without("operation"), "operation must be `Apply` or `Update`"),
    ],
)
def test_decode_errors(entry, message):
    managedfields.decode([VALID])  # the valid form decodes
    with pytest.raises(DecodeError) as e:
        managedfields.decode([entry])
    assert str(e.value) == message


def test_decode_invalid_fields_v1():
    with pytest.raises(DecodeError) as e:
        managedfields.decode([{**VALID, "fieldsV1": {"k:{bad": {}}}])
    assert "error decoding set" in str(e.value)


ROUND_TRIPS = [  # TestRoundTripManagedFields (YAML as upstream writes it; compared as data)
    "null\n",
    """- apiVersion: v1
  fieldsType: FieldsV1
  fieldsV1:
    v:3:
      f:alsoPi: {}
    v:3.1415:
      f:pi: {}
    v:false:
      f:notTrue: {}
  manager: foo
  operation: Update
  time: "2001-02-03T04:05:06Z"
- apiVersion: v1beta1
  fieldsType: FieldsV1
  fieldsV1:
    i:5:
      f:i: {}
  manager: foo
  operation: Update
  time: "2011-12-13T14:15:16Z"
""",
    """- apiVersion: v1
  fieldsType: FieldsV1
  fieldsV1:
    f:spec:
      f:containers:
        k:{"name":"c"}:
          f:image: {}
          f:name: {}
  manager: foo
  operation: Apply
""",
    """- apiVersion: v1
  fieldsType: FieldsV1
  fieldsV1:
    f:apiVersion: {}
    f:kind: {}
    f:metadata:
      f:labels:
        f:app: {}
      f:name: {}
    f:spec:
      f:replicas: {}
      f:selector:
        f:matchLabels:
          f:app: {}
      f:template:
        f:medatada:
          f:labels:
            f:app: {}
        f:spec:
          f:containers:
            k:{"name":"nginx"}:
              .: {}
              f:image: {}
              f:name: {}
              f:ports:
                i:0:
                  f:containerPort: {}
  manager: foo
  operation: Update
""",
    """- apiVersion: v1
  fieldsType: FieldsV1
  fieldsV1:
    f:spec:
      f:replicas: {}
  manager: foo
  operation: Update
  subresource: scale
""",
]


@pytest.mark.parametrize("text", ROUND_TRIPS)
def test_round_trip_managed_fields(text):
    entries = yaml.safe_load(text)
    encoded = managedfields.encode(managedfields.decode(entries))
    assert encoded == entries
    if entries:
        # Go struct order: manager, operation, apiVersion, time, fieldsType, fieldsV1, subresource.
        order = ["manager", "operation", "apiVersion", "time", "fieldsType", "fieldsV1", "subresource"]
        for entry in encoded:
            assert list(entry) == [k for k in order if k in entry]


def test_round_trip_orders_values_as_upstream():
    entries = yaml.safe_load(ROUND_TRIPS[1])
    fields = managedfields.encode(managedfields.decode(entries))[0]["fieldsV1"]
    assert list(fields) == ["v:3", "v:3.1415", "v:false"]  # numbers < booleans, 3 < 3.1415


@pytest.mark.parametrize(
    ("entry", "identifier"),
    [  # TestBuildManagerIdentifier
        (("foo", "Update", "v1", ""), '{"manager":"foo","operation":"Update","apiVersion":"v1"}'),
        (("foo", "Apply", "v1", ""), '{"manager":"foo","operation":"Apply"}'),
        (("foo", "Apply", "v1", "scale"), '{"manager":"foo","operation":"Apply","subresource":"scale"}'),
        (
            ("a<b", "Update", "v1", "status"),
            '{"manager":"a\\u003cb","operation":"Update","apiVersion":"v1","subresource":"status"}',
        ),
    ],
)
def test_build_manager_identifier(entry, identifier):
    assert build_manager_identifier(*entry) == identifier


def _e(manager, operation, time=None, subresource=None):
    entry = {"manager": manager, "operation": operation}
    if time:
        entry["time"] = time
    if subresource:
        entry["subresource"] = subresource
    return entry


@pytest.mark.parametrize(
    ("given", "expected"),
    [  # TestSortEncodedManagedFields
        (
            [_e("a", "Apply"), _e("a", "Update", "2001-01-01T01:00:00Z")],
            [_e("a", "Apply"), _e("a", "Update", "2001-01-01T01:00:00Z")],
        ),
        (
            [_e("a", "Apply", "2001-01-01T01:00:00Z"), _e("b", "Apply"), _e("a", "Apply")],
            [_e("a", "Apply"), _e("b", "Apply"), _e("a", "Apply", "2001-01-01T01:00:00Z")],
        ),
        (
            [_e("a", "Update", "2001-01-01T01:00:00Z"), _e("a", "Apply")],
            [_e("a", "Apply"), _e("a", "Update", "2001-01-01T01:00:00Z")],
        ),
        (
            [
                _e("c", "Update", "2001-01-01T01:00:00Z"),
                _e("a", "Apply"),
                _e("g", "Apply"),
                _e("f", "Update", "2002-01-01T01:00:00Z"),
                _e("i", "Apply"),
                _e("d", "Update", "2002-01-01T01:00:00Z"),
                _e("h", "Apply"),
                _e("e", "Update", "2003-01-01T01:00:00Z"),
                _e("b", "Apply"),
            ],
            [
                _e("a", "Apply"),
                _e("b", "Apply"),
                _e("g", "Apply"),
                _e("h", "Apply"),
                _e("i", "Apply"),
                _e("c", "Update", "2001-01-01T01:00:00Z"),
                _e("d", "Update", "2002-01-01T01:00:00Z"),
                _e("f", "Update", "2002-01-01T01:00:00Z"),
                _e("e", "Update", "2003-01-01T01:00:00Z"),
            ],
        ),
        (
            [_e("a", "Apply", subresource="status"), _e("a", "Apply", subresource="scale"), _e("a", "Apply")],
            [_e("a", "Apply"), _e("a", "Apply", subresource="scale"), _e("a", "Apply", subresource="status")],
        ),
        (  # same second: kube-controller-manager before kubectl-create (a real watch stream)
            [
                _e("kubectl-create", "Update", "2022-01-23T14:26:23Z"),
                _e("kube-controller-manager", "Update", "2022-01-23T14:26:23Z"),
            ],
            [
                _e("kube-controller-manager", "Update", "2022-01-23T14:26:23Z"),
                _e("kubectl-create", "Update", "2022-01-23T14:26:23Z"),
            ],
        ),
    ],
)
def test_sort_encoded_managed_fields(given, expected):
    assert managedfields.sort_entries(given) == expected


def test_times_are_reencoded_in_utc_seconds():
    managed = managedfields.decode([{**VALID, "operation": "Update", "time": "2024-05-06T09:08:07.123+02:00"}])
    assert managedfields.encode(managed)[0]["time"] == "2024-05-06T07:08:07Z"


@pytest.mark.parametrize(
    ("entries", "reset"),
    [
        ([], True),
        ([{}], True),
        ([{"manager": "", "fieldsV1": None}], True),
        ([{"fieldsV1": {}}], False),
        ([{}, {}], False),
        (None, False),
        ([VALID], False),
    ],
)
def test_is_reset(entries, reset):
    assert managedfields.is_reset(entries) is reset


# --- the conflict error (TestNewConflictError) ------------------------------------------------------


def _status(error):
    s = error.status
    return s.code, s.reason, s.message, [(c.reason, c.message, c.field) for c in s.details.causes]


def test_one_conflict_with_an_updater():
    identifier = '{"manager":"foo","operation":"Update","apiVersion":"v1","time":"2001-02-03T04:05:06Z"}'
    error = conflict_error(Conflicts([(identifier, P("spec", "replicas"))]))
    assert isinstance(error, errors.StatusError)
    assert _status(error) == (
        409,
        "Conflict",
        'Apply failed with 1 conflict: conflict with "foo" using v1 at 2001-02-03T04:05:06Z: .spec.replicas',
        [("FieldManagerConflict", 'conflict with "foo" using v1 at 2001-02-03T04:05:06Z', ".spec.replicas")],
    )
    assert error.status.status == "Failure"
    assert not error.status.details.name and not error.status.details.kind


def test_two_conflicts_with_two_managers():
    foo = '{"manager":"foo","operation":"Update","apiVersion":"v1","time":"2001-02-03T04:05:06Z"}'
    bar = '{"manager":"bar","operation":"Apply"}'
    error = conflict_error(Conflicts([(foo, P("spec", "replicas")), (bar, P("metadata", "labels", "app"))]))
    assert _status(error) == (
        409,
        "Conflict",
        'Apply failed with 2 conflicts: conflicts with "bar":\n- .metadata.labels.app\n'
        'conflicts with "foo" using v1 at 2001-02-03T04:05:06Z:\n- .spec.replicas',
        [
            ("FieldManagerConflict", 'conflict with "foo" using v1 at 2001-02-03T04:05:06Z', ".spec.replicas"),
            ("FieldManagerConflict", 'conflict with "bar"', ".metadata.labels.app"),
        ],
    )


def test_conflict_with_a_subresource_manager():
    identifier = build_manager_identifier("foo", "Update", "v1", "scale")
    error = conflict_error(Conflicts([(identifier, P("spec", "replicas"))]))
    assert error.status.message == (
        'Apply failed with 1 conflict: conflict with "foo" with subresource "scale" using v1: .spec.replicas'
    )
    assert error.status.details.causes[0].message == 'conflict with "foo" with subresource "scale" using v1'


# --- options ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("user_agent", "manager"),
    [
        ("kubectl/v1.32.0 (linux/amd64) kubernetes/70d3cc9", "kubectl"),
        (
            "kube-controller-manager/v1.32.0 (linux/amd64) kubernetes/70d3cc9/system:serviceaccount:kube-system:x",
            "kube-controller-manager",
        ),
        ("OpenAPI-Generator/31.0.0/python", "OpenAPI-Generator"),
        ("curl/8.5.0", "curl"),
        ("", ""),
        ("no-slash at all", "no-slash at all"),
        ("tab\there/1", "tabhere"),  # non-printable characters are dropped
        ("x" * 200 + "/1", "x" * 128),  # cut to 128 bytes
        ("é" * 100, "é" * 64),  # whole characters only
    ],
)
def test_manager_from_user_agent(user_agent, manager):
    assert options.prefix_from_user_agent(user_agent) == manager
    assert options.manager_or_user_agent("", user_agent) == manager
    assert options.manager_or_user_agent("explicit", user_agent) == "explicit"


def test_apply_requires_a_field_manager():
    errs = options.patch_options_errors("", None, is_apply=True)
    error = errors.invalid_options("PatchOptions", errs)
    assert error.code == 422
    assert error.status.reason == "Invalid"
    assert (
        error.status.message
        == 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch'
    )
    cause = error.status.details.causes[0]
    assert (cause.reason, cause.message, cause.field) == (
        "FieldValueRequired",
        "Required value: is required for apply patch",
        "fieldManager",
    )
    assert (error.status.details.group, error.status.details.kind) == ("meta.k8s.io", "PatchOptions")


def test_force_is_only_for_apply():
    errs = options.patch_options_errors("m", False, is_apply=False)
    assert [str(e) for e in errs] == ["force: Forbidden: may not be specified for non-apply patch"]
    assert options.patch_options_errors("m", True, is_apply=True) == []


def test_field_manager_too_long_and_unprintable():
    errs = options.validate_field_manager("x" * 129)
    assert [str(e) for e in errs] == ["fieldManager: Too long: may not be more than 128 bytes"]
    assert errs[0].type == "FieldValueTooLong"
    assert options.validate_field_manager("x" * 128) == []
    errs = options.validate_field_manager("a\x00é\x7f")
    assert [str(e) for e in errs] == [
        'fieldManager: Invalid value: "a\\x00é\\x7f": invalid character U+0000 (at position 1)',
        'fieldManager: Invalid value: "a\\x00é\\x7f": invalid character U+007F (at position 4)',
    ]
    error = errors.invalid_options("UpdateOptions", errs[:1])
    assert error.status.message == (
        'UpdateOptions.meta.k8s.io "" is invalid: fieldManager: Invalid value: "a\\x00é\\x7f": '
        "invalid character U+0000 (at position 1)"
    )


def test_object_meta_managed_fields_validation():
    errs = options.managed_fields_errors(
        [{"manager": "m", "operation": "Patch", "fieldsType": "FieldsV2", "subresource": "s" * 257}]
    )
    assert [str(e) for e in errs] == [
        'metadata.managedFields[0].operation: Invalid value: "Patch": must be `Apply` or `Update`',
        'metadata.managedFields[0].fieldsType: Invalid value: "FieldsV2": must be `FieldsV1`',
        "metadata.managedFields[0].subresource: Too long: may not be more than 256 bytes",
    ]


def test_admission_warning_for_invalid_managed_fields():
    assert options.managed_fields_admission_warning([VALID]) is None
    warning = options.managed_fields_admission_warning([{**VALID, "operation": "x"}])
    assert warning == (
        ".metadata.managedFields was in an invalid state after admission; this could be caused by an outdated "
        "mutating admission controller; please fix your requests: operation must be `Apply` or `Update`"
    )
