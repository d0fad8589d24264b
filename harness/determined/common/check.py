"""Runtime checks that raise :class:`CheckFailedError` (names as in Determined's
``determined.common.check``). Each check exists twice: ``check.eq(...)`` and
``check_eq(...)``; the optional ``reason`` is appended to the message.
"""

from typing import Any, Container, Optional, Sized, Tuple, Type, Union


class CheckFailedError(Exception):
    """A check did not hold."""


def _fail(what: str, reason: Optional[str]) -> None:
    msg = f"CHECK FAILED! {what}"
    if reason is not None:
        msg += f": {reason}"
    raise CheckFailedError(msg)


def true(val: bool, reason: Optional[str] = None) -> None:
    if not val:
        _fail(f"Got {val}, expected True", reason)


def false(val: bool, reason: Optional[str] = None) -> None:
    if val:
        _fail(f"Got {val}, expected False", reason)


def is_none(val: Optional[Any], reason: Optional[str] = None) -> None:
    if val is not None:
        _fail(f"Got {val}, expected None", reason)


def is_not_none(val: Optional[Any], reason: Optional[str] = None) -> None:
    if val is None:
        _fail("Got None, expected a value", reason)


def eq(val: Any, expected: Any, reason: Optional[str] = None) -> None:
    if val != expected:
        _fail(f"Got {val!r}, expected {expected!r}", reason)


def not_eq(x: Any, y: Any, reason: Optional[str] = None) -> None:
    if x == y:
        _fail(f"Got {x!r}, expected something other than {y!r}", reason)


def gt(x: Any, y: Any, reason: Optional[str] = None) -> None:
    if not x > y:
        _fail(f"{x!r} is not greater than {y!r}", reason)


def gt_eq(x: Any, y: Any, reason: Optional[str] = None) -> None:
    if not x >= y:
        _fail(f"{x!r} is not greater than or equal to {y!r}", reason)


def lt(x: Any, y: Any, reason: Optional[str] = None) -> None:
    if not x < y:
        _fail(f"{x!r} is not less than {y!r}", reason)


def lt_eq(x: Any, y: Any, reason: Optional[str] = None) -> None:
    if not x <= y:
        _fail(f"{x!r} is not less than or equal to {y!r}", reason)


def equal_lengths(x: Sized, y: Sized, reason: Optional[str] = None) -> None:
    if len(x) != len(y):
        _fail(f"lengths differ: {len(x)} != {len(y)}", reason)


def len_eq(val: Sized, expected_len: int, reason: Optional[str] = None) -> None:
    if len(val) != expected_len:
        _fail(f"Got length {len(val)}, expected {expected_len}", reason)


def is_in(val: Any, expected: Container[Any], reason: Optional[str] = None) -> None:
    if val not in expected:
        _fail(f"{val!r} is not in {expected!r}", reason)


def not_in(val: Any, expected: Container[Any], reason: Optional[str] = None) -> None:
    if val in expected:
        _fail(f"{val!r} is in {expected!r}", reason)


def is_type(val: Any, expected: type, reason: Optional[str] = None) -> None:
    if type(val) is not expected:
        _fail(f"Got type {type(val).__name__}, expected {expected.__name__}", reason)


def is_instance(
    val: Any, expected: Union[Type, Tuple[Type, ...]], reason: Optional[str] = None
) -> None:
    if not isinstance(val, expected):
        _fail(f"{val!r} ({type(val).__name__}) is not an instance of {expected}", reason)


def is_not_instance(
    val: Any, expected: Union[Type, Tuple[Type, ...]], reason: Optional[str] = None
) -> None:
    if isinstance(val, expected):
        _fail(f"{val!r} is an instance of {expected}", reason)


def is_subclass(val: Any, expected: type, reason: Optional[str] = None) -> None:
    if not (isinstance(val, type) and issubclass(val, expected)):
        _fail(f"{val!r} is not a subclass of {expected.__name__}", reason)


check_true = true
check_false = false
check_none = is_none
check_not_none = is_not_none
check_eq = eq
check_not_eq = not_eq
check_gt = gt
check_gt_eq = gt_eq
check_lt = lt
check_lt_eq = lt_eq
check_eq_len = equal_lengths
check_len = len_eq
check_in = is_in
check_not_in = not_in
check_type = is_type
check_isinstance = is_instance
check_not_isinstance = is_not_instance
check_issubclass = is_subclass
