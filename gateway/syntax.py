"""String syntax as k8s.io/apimachinery's pkg/util/validation checks it, with upstream's exact wording:
DNS-1123 labels and subdomains, DNS-1035 labels, qualified names, label values, C identifiers,
environment variable names, config keys, percentages, HTTP header names, port names and numbers.

Each ``*_problems`` function returns upstream's messages for a value (empty: valid). Below every
layer that checks names (selectors, the registry's validation, admission).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final


def regex_error(message: str, pattern: str, *examples: str) -> str:
    """upstream's RegexError: the message, examples and the regular expression."""
    if not examples:
        return f"{message} (regex used for validation is '{pattern}')"
    shown = " or ".join(f"'{example}', " for example in examples)
    return f"{message} (e.g. {shown}regex used for validation is '{pattern}')"


def max_len_error(length: int) -> str:
    return f"must be no more than {length} characters"


def inclusive_range_error(low: int, high: int) -> str:
    return f"must be between {low} and {high}, inclusive"


_LABEL_FMT: Final = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN_FMT: Final = _LABEL_FMT + "(\\." + _LABEL_FMT + ")*"
_DNS1035_FMT: Final = "[a-z]([-a-z0-9]*[a-z0-9])?"
_QUALIFIED_FMT: Final = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE_FMT: Final = "(" + _QUALIFIED_FMT + ")?"
_C_IDENTIFIER_FMT: Final = "[A-Za-z_][A-Za-z0-9_]*"
_ENV_VAR_FMT: Final = "[-._a-zA-Z][-._a-zA-Z0-9]*"
_CONFIG_KEY_FMT: Final = "[-._a-zA-Z0-9]+"
_PERCENT_FMT: Final = "[0-9]+%"
_HTTP_HEADER_FMT: Final = "[-A-Za-z0-9]+"
_WILDCARD_FMT: Final = "\\*\\." + _SUBDOMAIN_FMT

LABEL_MSG: Final = regex_error(
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
    "and end with an alphanumeric character",
    _LABEL_FMT,
    "my-name",
    "123-abc",
)
SUBDOMAIN_MSG: Final = regex_error(
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
    "must start and end with an alphanumeric character",
    _SUBDOMAIN_FMT,
    "example.com",
)
DNS1035_MSG: Final = regex_error(
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
    "character, and end with an alphanumeric character",
    _DNS1035_FMT,
    "my-name",
    "abc-123",
)
_QUALIFIED_MSG: Final = regex_error(
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
    _QUALIFIED_FMT,
    "MyName",
    "my.name",
    "123-abc",
)
LABEL_VALUE_MSG: Final = regex_error(
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character",
    _LABEL_VALUE_FMT,
    "MyValue",
    "my_value",
    "12345",
)
_C_IDENTIFIER_MSG: Final = regex_error(
    "a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric "
    "characters or '_'",
    _C_IDENTIFIER_FMT,
    "my_name",
    "MY_NAME",
    "MyName",
)
_ENV_VAR_MSG: Final = regex_error(
    "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and "
    "must not start with a digit",
    _ENV_VAR_FMT,
    "my.env-name",
    "MY_ENV.NAME",
    "MyEnvName1",
)
_CONFIG_KEY_MSG: Final = regex_error(
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
    _CONFIG_KEY_FMT,
    "key.name",
    "KEY_NAME",
    "key-name",
)
_PERCENT_MSG: Final = regex_error(
    "a valid percent string must be a numeric string followed by an ending '%'", _PERCENT_FMT, "1%", "93%"
)
_HTTP_HEADER_MSG: Final = regex_error(
    "a valid HTTP header must consist of alphanumeric characters or '-'", _HTTP_HEADER_FMT, "X-Header-Name"
)
_WILDCARD_MSG: Final = regex_error(
    "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist "
    "of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character",
    _WILDCARD_FMT,
    "*.example.com",
)


def matcher(pattern: str) -> Callable[[str], bool]:
    compiled = re.compile(pattern)
    return lambda value: compiled.fullmatch(value) is not None


_is_label = matcher(_LABEL_FMT)
_is_subdomain = matcher(_SUBDOMAIN_FMT)
_is_dns1035 = matcher(_DNS1035_FMT)
_is_qualified = matcher(_QUALIFIED_FMT)
_is_label_value = matcher(_LABEL_VALUE_FMT)
_is_c_identifier = matcher(_C_IDENTIFIER_FMT)
_is_env_var = matcher(_ENV_VAR_FMT)
_is_config_key = matcher(_CONFIG_KEY_FMT)
is_percent = matcher(_PERCENT_FMT)
_is_http_header = matcher(_HTTP_HEADER_FMT)
_is_wildcard = matcher(_WILDCARD_FMT)
_PORT_NAME_CHARS: Final = re.compile("[-a-z0-9]+")


def dns1123_label_problems(value: str) -> list[str]:
    problems = [max_len_error(63)] if len(value) > 63 else []
    if not _is_label(value):
        problems.append(LABEL_MSG)
    return problems


def dns1123_subdomain_problems(value: str) -> list[str]:
    problems = [max_len_error(253)] if len(value) > 253 else []
    if not _is_subdomain(value):
        problems.append(SUBDOMAIN_MSG)
    return problems


def dns1035_label_problems(value: str) -> list[str]:
    problems = [max_len_error(63)] if len(value) > 63 else []
    if not _is_dns1035(value):
        problems.append(DNS1035_MSG)
    return problems


def wildcard_subdomain_problems(value: str) -> list[str]:
    problems = [max_len_error(253)] if len(value) > 253 else []
    if not _is_wildcard(value):
        problems.append(_WILDCARD_MSG)
    return problems


def qualified_name_problems(value: str) -> list[str]:
    """IsQualifiedName: ``[prefix/]name``, the prefix a DNS subdomain, the name at most 63 characters."""
    parts = value.split("/")
    problems: list[str] = []
    if len(parts) > 2:
        return [
            f"a qualified name {_QUALIFIED_MSG} with an optional DNS subdomain prefix and '/' "
            "(e.g. 'example.com/MyName')"
        ]
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            problems.append("prefix part must be non-empty")
        else:
            problems += ["prefix part " + p for p in dns1123_subdomain_problems(prefix)]
    if not name:
        problems.append("name part must be non-empty")
    elif len(name) > 63:
        problems.append("name part " + max_len_error(63))
    if not _is_qualified(name):
        problems.append("name part " + _QUALIFIED_MSG)
    return problems


def label_value_problems(value: str) -> list[str]:
    problems = [max_len_error(63)] if len(value) > 63 else []
    if not _is_label_value(value):
        problems.append(LABEL_VALUE_MSG)
    return problems


def c_identifier_problems(value: str) -> list[str]:
    return [] if _is_c_identifier(value) else [_C_IDENTIFIER_MSG]


def _chdir_prefix_problems(value: str) -> list[str]:
    if value in (".", ".."):
        return [f"must not be '{value}'"]
    if value.startswith(".."):
        return ["must not start with '..'"]
    return []


def env_var_name_problems(value: str) -> list[str]:
    problems = [] if _is_env_var(value) else [_ENV_VAR_MSG]
    return problems + _chdir_prefix_problems(value)


def config_key_problems(value: str) -> list[str]:
    problems = [max_len_error(253)] if len(value) > 253 else []
    if not _is_config_key(value):
        problems.append(_CONFIG_KEY_MSG)
    return problems + _chdir_prefix_problems(value)


def percent_problems(value: str) -> list[str]:
    return [] if is_percent(value) else [_PERCENT_MSG]


def http_header_name_problems(value: str) -> list[str]:
    return [] if _is_http_header(value) else [_HTTP_HEADER_MSG]


def port_number_problems(port: int) -> list[str]:
    return [] if 1 <= port <= 65535 else [inclusive_range_error(1, 65535)]


def port_name_problems(port: str) -> list[str]:
    """IsValidPortName (an IANA_SVC_NAME): at most 15 of [-a-z0-9], a letter, no edge or double hyphens."""
    problems = [max_len_error(15)] if len(port) > 15 else []
    if not _PORT_NAME_CHARS.fullmatch(port):
        problems.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not re.search("[a-z]", port):
        problems.append("must contain at least one letter (a-z)")
    if "--" in port:
        problems.append("must not contain consecutive hyphens")
    if port and (port[0] == "-" or port[-1] == "-"):
        problems.append("must not begin or end with a hyphen")
    return problems
