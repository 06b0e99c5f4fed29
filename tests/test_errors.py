"""What docs/architecture.md says of ``base/errors``: every exception ngcc raises on purpose
is an :class:`ngcc.NgccError` (so one ``except`` catches them), defined there (the
package exports them from it); the warnings are ``MeasurementWarning``s."""

from __future__ import annotations

import inspect

import ngcc
from ngcc.base import errors as _errors


def _classes(namespace: dict[str, object]) -> dict[str, type]:
    return {name: value for name, value in namespace.items()
            if inspect.isclass(value) and issubclass(value, BaseException)}


def test_every_error_is_an_ngcc_error_and_every_warning_a_measurement_warning():
    defined = _classes(vars(_errors))
    assert {name for name, cls in defined.items() if not issubclass(cls, ngcc.NgccError)} == {
        "MeasurementWarning", "TrialFlagWarning"}
    assert all(issubclass(cls, ngcc.MeasurementWarning) for cls in defined.values()
               if issubclass(cls, Warning))


def test_every_exception_the_package_exports_is_one_of_them():
    exported = _classes({name: getattr(ngcc, name) for name in ngcc.__all__})
    assert len(exported) > 20
    assert {name for name, cls in exported.items()
            if cls is not _classes(vars(_errors)).get(name)} == set()
