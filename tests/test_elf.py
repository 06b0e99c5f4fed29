"""ELF image size: Σ p_memsz of PT_LOAD segments, on hand-made ELF files."""

from __future__ import annotations

import struct

import pytest

from ngcc.base.errors import LibraryError
from ngcc.library.elf import elf_image_bytes

PT_LOAD, PT_DYNAMIC, PT_NOTE = 1, 2, 4


def make_elf64(segments: list[tuple[int, int, int]]) -> bytes:
    """A minimal little-endian ELF64 shared object with the given (type, filesz, memsz)."""
    ident = b"\x7fELF" + bytes([2, 1, 1, 0]) + bytes(8)       # 64-bit, LE, version 1
    header = ident + struct.pack("<HHIQQQIHHHHHH", 3, 62, 1, 0, 64, 0, 0, 64, 56,
                                 len(segments), 64, 0, 0)       # ET_DYN, x86-64, phoff 64
    table = b"".join(struct.pack("<IIQQQQQQ", p_type, 4, 0, 0, 0, filesz, memsz, 0x1000)
                     for p_type, filesz, memsz in segments)
    return header + table


def test_sums_memsz_of_load_segments_only(tmp_path):
    path = tmp_path / "fake.so"
    path.write_bytes(make_elf64([(PT_LOAD, 0x4F0, 0x4F0), (PT_LOAD, 0x7A1, 0x7A1),
                                 (PT_DYNAMIC, 0x100, 0x100), (PT_LOAD, 0x220, 0x228),
                                 (PT_NOTE, 0x20, 0x20)]))
    assert elf_image_bytes(path) == 0x4F0 + 0x7A1 + 0x228   # bss counts, filesz does not


def test_no_load_segment_is_zero(tmp_path):
    path = tmp_path / "empty.so"
    path.write_bytes(make_elf64([(PT_NOTE, 8, 8)]))
    assert elf_image_bytes(path) == 0


def test_built_instance_library_has_a_plausible_image():
    import ngcc
    size = elf_image_bytes(ngcc.instance("SM3").library)
    assert 1000 < size < 1 << 20


def test_not_an_elf_file_is_a_library_error(tmp_path):
    path = tmp_path / "text.so"
    path.write_text("not an ELF file\n")
    with pytest.raises(LibraryError, match="not an ELF"):
        elf_image_bytes(path)


def test_missing_file_is_a_library_error(tmp_path):
    with pytest.raises(LibraryError, match="cannot read"):
        elf_image_bytes(tmp_path / "missing.so")
