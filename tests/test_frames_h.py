"""The trial's facts (and the leak run's) are listed once per side and cross-checked:
``trial_facts``/``leak_facts`` in ``csrc/driver/frames.h``, the order ``frames.c`` packs
them in, ``_protocol.TRIAL_FIELDS``/``LEAK_FIELDS`` that read them, and the readers in
``ngcc/driver/child.py`` and ``ngcc/driver/facts.py`` that use them. A field added on one
side only fails here, by name."""

from __future__ import annotations

import re

import pytest
from conftest import REPO

from ngcc.driver import protocol as _protocol

FRAMES_H = REPO / "csrc" / "driver" / "frames.h"
FRAMES_C = REPO / "csrc" / "driver" / "frames.c"
#: The modules that use the facts: the modes (``child``) and their checks (``facts``).
READERS = [REPO / "ngcc" / "driver" / name for name in ("child.py", "facts.py")]

#: The struct module's code of each C field type (frames.h uses only these).
STRUCT_CODES = {"uint32_t": "I", "int32_t": "i", "uint64_t": "Q", "double": "d"}
#: frame_put_* of each C field type (the signed ones travel as their u32 bits).
PUTS = {"uint32_t": "u32", "int32_t": "u32", "uint64_t": "u64", "double": "f64"}
#: A C array field and the Python names of its elements.
ARRAY_NAMES = {"load_average": ("load_1", "load_5", "load_15")}
#: Fields the driver sends that the Python reader does not use yet (each says why).
UNREAD = {
    "setup_cpu_ns",  # process CPU time before the first call: sent, not yet in evidence
}

#: struct name in frames.h -> (its Python field list, frames.c's packer, its size macro)
STRUCTS = {
    "trial_facts": (_protocol.TRIAL_FIELDS, "frame_pack_trial", "FRAME_TRIAL_BYTES"),
    "leak_facts": (_protocol.LEAK_FIELDS, "frame_pack_leak", "FRAME_LEAK_DONE_BYTES"),
}


def c_fields(struct: str) -> list[tuple[str, str, int]]:
    """(name, C type, element count) of every field of ``typedef struct {...} struct;``."""
    match = re.search(r"typedef struct \{((?:(?!typedef struct).)*?)\} %s;" % struct,
                      FRAMES_H.read_text(), re.S)
    assert match, "frames.h has no struct %s" % struct
    body = re.sub(r"/\*.*?\*/", "", match.group(1), flags=re.S)
    declarations = [d.strip() for d in body.split(";") if d.strip()]
    fields = []
    for declaration in declarations:
        parsed = re.fullmatch(r"(\w+)\s+(\w+)(?:\[(\d+)\])?", declaration)
        assert parsed and parsed[1] in STRUCT_CODES, "%s: %r is not a plain field" % (
            struct, declaration)
        fields.append((parsed[2], parsed[1], int(parsed[3] or 1)))
    return fields


def expanded(fields: list[tuple[str, str, int]]) -> list[tuple[str, str]]:
    """The fields as the wire carries them: (Python name, struct code), arrays spread."""
    wire = []
    for name, c_type, count in fields:
        names = ARRAY_NAMES.get(name, (name,)) if count > 1 else (name,)
        assert len(names) == count, "name the %d elements of %s in ARRAY_NAMES" % (count, name)
        wire += [(element, STRUCT_CODES[c_type]) for element in names]
    return wire


def packed(function: str) -> list[tuple[str, str]]:
    """(field, put kind) in the order ``function`` in frames.c writes them; a loop over
    an array is one entry per element."""
    text = FRAMES_C.read_text()
    match = re.search(r"void %s\([^)]*\)\s*\{(.*?)\n\}" % function, text, re.S)
    assert match, "frames.c has no %s" % function
    found = []
    for loop, kind, name in re.findall(
            r"(for \(i = 0; i < \d+; i\+\+\)\s*(?:at = )?)?frame_put_(u32|u64|f64)\(at, "
            r"(?:\(uint32_t\))?f->(\w+)(?:\[i\])?\)", match.group(1)):
        count = int(re.search(r"< (\d+)", loop)[1]) if loop else 1
        found += [(name, kind)] * count
    return found


@pytest.mark.parametrize("struct", sorted(STRUCTS))
def test_python_reads_the_fields_frames_h_declares(struct):
    python_fields, _, _ = STRUCTS[struct]
    assert expanded(c_fields(struct)) == list(python_fields)


@pytest.mark.parametrize("struct", sorted(STRUCTS))
def test_frames_c_packs_every_field_in_order(struct):
    _, function, _ = STRUCTS[struct]
    declared = [(name, PUTS[c_type]) for name, c_type, count in c_fields(struct)
                for _ in range(count)]
    assert packed(function) == declared


@pytest.mark.parametrize("struct", sorted(STRUCTS))
def test_the_payload_size_is_the_sum_of_the_fields(struct):
    python_fields, _, macro = STRUCTS[struct]
    match = re.search(r"#define %s \((\d+) \* 4 \+ (\d+) \* 8\)" % macro, FRAMES_H.read_text())
    assert match, "frames.h: %s is not (N * 4 + M * 8)" % macro
    narrow, wide = int(match[1]), int(match[2])
    sizes = [4 if code in "Ii" else 8 for _, code in python_fields]
    assert (sizes.count(4), sizes.count(8)) == (narrow, wide)
    layout = _protocol.TRIAL_LAYOUT if struct == "trial_facts" else _protocol.LEAK_LAYOUT
    assert layout.size == 4 * narrow + 8 * wide


def test_the_child_uses_every_field_the_driver_sends():
    read = {name for path in READERS
            for name in re.findall(r"""\[["'](\w+)["']\]""", path.read_text())}
    sent = {name for fields, _, _ in STRUCTS.values() for name, _ in fields}
    assert sent >= UNREAD, "UNREAD names a field the driver no longer sends"
    assert sent - read <= UNREAD, "sent but never used by ngcc/driver/child.py or facts.py"
