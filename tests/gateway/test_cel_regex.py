"""CEL's regular expressions against a running server, as cel-go's (issue 34 item 6; kube-apiserver
1.32): RE2 syntax and linear-time matching — a pattern that makes a backtracking engine run for
ever is answered at once while others are served — Go's regexp errors for a pattern RE2 refuses
(when the CRD is written if the pattern is a literal, when the rule runs otherwise), and the
results of matches, find and findAll as Go's MatchString, FindString and FindAllString give them.

The module has a server of its own: its CRDs would otherwise show in other modules' discovery."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from .helpers import CRDS, GatewayProcess, install_crd, namespaced_crd

GROUP = "regex.example.com"
RULE_FIELD = "spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule"


def crd(plural: str, properties: dict[str, Any], rules: list[dict[str, str]]) -> dict[str, Any]:
    """A namespaced CRD whose objects' spec has these properties and rules."""
    return namespaced_crd(
        GROUP, plural, {"type": "object", "properties": properties, "x-kubernetes-validations": rules}
    )


def custom(kind: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": f"{GROUP}/v1", "kind": kind, "metadata": {"name": name}, "spec": spec}


@pytest.fixture(scope="module")
def regex_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayProcess]:
    process = GatewayProcess(tmp_path_factory.mktemp("cel-regex-gateway")).start()
    yield process
    process.kill()


@pytest.fixture(scope="module")
def api(regex_server: GatewayProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=regex_server.url, timeout=120) as client:
        yield client


TEXT = {"type": "string", "maxLength": 100_000}
BACKTRACKING = "(a+)+$"  # 2^n ways to split n a's: a backtracking engine tries them all before the '!'


def test_a_backtracking_pattern_is_answered_while_others_are_served(
    regex_server: GatewayProcess, api: httpx.Client
) -> None:
    """``(a+)+$`` on 50,000 a's and a '!': RE2 answers in linear time, so the create is decided
    (not cut by its timeout) and every /readyz sent meanwhile is answered."""
    rules = [
        {"rule": f"!self.text.matches('{BACKTRACKING}')"},
        {"rule": f"self.text.find('{BACKTRACKING}') == ''"},
        {"rule": f"self.text.findAll('{BACKTRACKING}').size() == 0"},
    ]
    path = install_crd(api, crd("lines", {"text": TEXT}, rules))
    outcome: dict[str, httpx.Response] = {}

    def submit() -> None:
        body = custom("Line", "long", {"text": "a" * 50_000 + "!"})
        outcome["create"] = api.post(path, json=body, params={"timeout": "30s"})

    submitter = threading.Thread(target=submit)
    answered = 0
    with httpx.Client(base_url=regex_server.url, timeout=10) as bystander:
        submitter.start()
        while submitter.is_alive() or answered == 0:
            assert bystander.get("/readyz").status_code == 200
            answered += 1
    submitter.join()
    assert outcome["create"].status_code == 201, outcome["create"].text
    refused = api.post(path, json=custom("Line", "all-a", {"text": "a" * 50_000}))
    assert refused.status_code == 422, refused.text
    assert [c["message"] for c in refused.json()["details"]["causes"]] == [
        f'Invalid value: "object": failed rule: {rule["rule"]}' for rule in rules
    ]


@pytest.mark.parametrize(
    ("pattern", "error"),
    [
        (r"(\w)\1", r"invalid escape sequence: `\1`"),  # a backreference
        ("a(?=b)", "invalid or unsupported Perl syntax: `(?=`"),  # a lookahead
        ("(?<=a)b", "invalid named capture: `(?<=a)b`"),  # a lookbehind: Go reads (?< as a named group
        ("a**", "invalid nested repetition operator: `**`"),
        ("a{1001}", "invalid repeat count: `{1001}`"),
        (r"\C", r"invalid escape sequence: `\C`"),  # RE2 has it (any byte), Go does not
        ("(a", "missing closing ): `(a`"),
    ],
)
def test_a_literal_pattern_re2_refuses_is_refused_with_the_crd(api: httpx.Client, pattern: str, error: str) -> None:
    """cel-go compiles a literal pattern when it makes the program: the CRD is invalid."""
    rule = f"self.text.matches('{pattern.replace(chr(92), chr(92) * 2)}')"
    response = api.post(CRDS, json=crd("refuseds", {"text": TEXT}, [{"rule": rule}]))
    assert response.status_code == 422, response.text
    causes = response.json()["details"]["causes"]
    assert [(c["reason"], c["field"]) for c in causes] == [("FieldValueInvalid", RULE_FIELD)]
    assert causes[0]["message"].endswith(f": program instantiation failed: error parsing regexp: {error}")
    assert api.get(f"{CRDS}/refuseds.{GROUP}").status_code == 404


PATTERNS = {"text": {"type": "string", "maxLength": 64}, "pattern": {"type": "string", "maxLength": 32}}


@pytest.fixture(scope="module")
def probes(api: httpx.Client) -> str:
    """Probe objects: rules applying a pattern read from the object (compiled when they run)."""
    rules = [
        {"rule": "self.text.matches(self.pattern)"},
        {"rule": "self.text.find(self.pattern) != 'x'"},
        {"rule": "self.text.findAll(self.pattern).size() >= 0"},
    ]
    return install_crd(api, crd("probes", PATTERNS, rules))


def test_a_pattern_from_the_object_is_refused_when_the_rule_runs(api: httpx.Client, probes: str) -> None:
    response = api.post(probes, json=custom("Probe", "backref", {"text": "aa", "pattern": r"(a)\1"}))
    assert response.status_code == 422, response.text
    error = r"error parsing regexp: invalid escape sequence: `\1`"
    assert [c["message"] for c in response.json()["details"]["causes"]] == [
        f'Invalid value: "object": self.text.matches(self.pattern): {error}',
        f"Invalid value: \"object\": self.text.find(self.pattern) != 'x': Illegal regex: {error}",
        f'Invalid value: "object": self.text.findAll(self.pattern).size() >= 0: Illegal regex: {error}',
    ]
    made = api.post(probes, json=custom("Probe", "fine", {"text": "aa", "pattern": "(a)a"}), params={"dryRun": "All"})
    assert made.status_code == 201, made.text


# (text, pattern, limit) -> Go's FindString, FindAllString(text, limit), MatchString: what cel-go's
# find, findAll and matches return (regexp of Go 1.23; run on Go's regexp to write them down).
CASES = [
    ("baaac", "a*", -1, "", ["", "aaa", ""], True),  # an empty match right after a match is skipped
    ("a,b,,c", "[^,]*", -1, "a", ["a", "b", "", "c"], True),
    ("aaa", "a*?", -1, "", ["", "", "", ""], True),
    ("abc", "", -1, "", ["", "", "", ""], True),
    ("abc", "", 2, "", ["", ""], True),
    ("abc 123 45 6", "[0-9]+", 2, "123", ["123", "45"], True),
    ("abc 123 45 6", "[0-9]+", -7, "123", ["123", "45", "6"], True),  # any negative limit: all
    ("abab", "(ab)+", 0, "abab", [], True),
    ("aaaa", "aa", -1, "aa", ["aa", "aa"], True),
    ("xabcx", "a|ab", -1, "a", ["a"], True),  # leftmost-first, as Perl's, not longest
    ("ab\n", "b$", -1, "", [], False),  # $ is the end of the text, not before a last newline
    ("a\nb", "(?m)^b", -1, "b", ["b"], True),
    ("x\ny", ".", -1, "x", ["x", "y"], True),
    ("\u0661\u0662\u0663 42", r"\d+", -1, "42", ["42"], True),  # \d is ASCII
    ("über", r"\w+", -1, "ber", ["ber"], True),  # \w is ASCII
    ("héllo wörld", "[^a-z ]", -1, "é", ["é", "ö"], True),  # code points, not bytes
    ("日本語", ".", 2, "日", ["日", "本"], True),
    ("xyz", "q", -1, "", [], False),
]


@pytest.fixture(scope="module")
def results(api: httpx.Client) -> str:
    """Result objects: each states what find, findAll and matches give; the rules check it."""
    properties = {
        **PATTERNS,
        "limit": {"type": "integer"},
        "found": {"type": "string", "maxLength": 64},
        "all": {"type": "array", "maxItems": 65, "items": {"type": "string", "maxLength": 64}},
        "matched": {"type": "boolean"},
    }
    listed = "self.text.findAll(self.pattern, self.limit).map(m, '<' + m + '>').join(',')"
    rules = [
        {"rule": "self.text.find(self.pattern) == self.found", "messageExpression": "self.text.find(self.pattern)"},
        {"rule": "self.text.findAll(self.pattern, self.limit) == self.all", "messageExpression": listed},
        {"rule": "self.text.matches(self.pattern) == self.matched", "messageExpression": "'not that'"},
    ]
    return install_crd(api, crd("results", properties, rules))


@pytest.mark.parametrize(("text", "pattern", "limit", "found", "all_", "matched"), CASES)
def test_results_are_go_regexps(
    api: httpx.Client, results: str, text: str, pattern: str, limit: int, found: str, all_: list[str], matched: bool
) -> None:
    spec = {"text": text, "pattern": pattern, "limit": limit, "found": found, "all": all_, "matched": matched}
    response = api.post(results, json=custom("Result", "case", spec), params={"dryRun": "All"})
    assert response.status_code == 201, response.json()["details"]["causes"]
