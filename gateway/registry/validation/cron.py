"""Standard cron schedules as github.com/robfig/cron/v3's ParseStandard reads them (what CronJob
validation calls): five fields or a descriptor, with that parser's error messages."""

from __future__ import annotations

import re
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from protokube.gateway.errors import go_quote

_MONTHS = {
    name: i
    for i, name in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1)
}
_DAYS = {name: i for i, name in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))}
# (minimum, maximum, names) of minute, hour, day of month, month, day of week.
_FIELDS = ((0, 59, None), (0, 23, None), (1, 31, None), (1, 12, _MONTHS), (0, 6, _DAYS))
_DESCRIPTORS = ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")
_DURATION = re.compile(r"([0-9]*(\.[0-9]*)?(ns|us|µs|μs|ms|s|m|h))+")


class CronError(ValueError):
    """A schedule the parser refuses; the message is robfig/cron's."""


def _int(text: str) -> int:
    """mustParseInt: strconv.Atoi's syntax, no negatives."""
    if not re.fullmatch(r"[+-]?[0-9]+", text):
        raise CronError(f"failed to parse int from {text}: strconv.Atoi: parsing {go_quote(text)}: invalid syntax")
    number = int(text)
    if number < 0:
        raise CronError(f"negative number ({number}) not allowed: {text}")
    return number


def _int_or_name(text: str, names: dict[str, int] | None) -> int:
    if names and text.lower() in names:
        return names[text.lower()]
    return _int(text)


def _range(expression: str, low: int, high: int, names: dict[str, int] | None) -> None:
    range_and_step = expression.split("/")
    bounds = range_and_step[0].split("-")
    if bounds[0] in ("*", "?"):
        start, end = low, high
    else:
        start = _int_or_name(bounds[0], names)
        if len(bounds) == 1:
            end = start
        elif len(bounds) == 2:
            end = _int_or_name(bounds[1], names)
        else:
            raise CronError(f"too many hyphens: {expression}")
    step = 1
    if len(range_and_step) == 2:
        step = _int(range_and_step[1])
        if len(bounds) == 1:
            end = high
    elif len(range_and_step) > 2:
        raise CronError(f"too many slashes: {expression}")
    if start < low:
        raise CronError(f"beginning of range ({start}) below minimum ({low}): {expression}")
    if end > high:
        raise CronError(f"end of range ({end}) above maximum ({high}): {expression}")
    if start > end:
        raise CronError(f"beginning of range ({start}) beyond end of range ({end}): {expression}")
    if step == 0:
        raise CronError(f"step of range should be a positive number: {expression}")


def parse_standard(schedule: str) -> None:
    """Raise CronError for a schedule ParseStandard refuses."""
    if not schedule:
        raise CronError("empty spec string")
    if schedule.startswith(("TZ=", "CRON_TZ=")):
        prefix, _, schedule = schedule.partition(" ")
        zone = prefix.partition("=")[2]
        try:
            ZoneInfo(zone)
        except (ZoneInfoNotFoundError, ValueError):
            raise CronError(f"provided bad location {zone}: unknown time zone {zone}") from None
    if schedule.startswith("@"):
        if schedule.startswith("@every "):
            duration = schedule.removeprefix("@every ")
            if not _DURATION.fullmatch(duration) and duration != "0":
                raise CronError(f"failed to parse duration {schedule}: time: invalid duration {go_quote(duration)}")
        elif schedule not in _DESCRIPTORS:
            raise CronError(f"unrecognized descriptor: {schedule}")
        return
    fields = schedule.split()
    if len(fields) != 5:
        raise CronError(f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]")
    for field, (low, high, names) in zip(fields, _FIELDS, strict=True):
        for expression in field.split(","):
            _range(expression, low, high, names)
