"""cutlass-overhead-doctor --inspect PATH: was the host code that calls CUTLASS compiled without optimisation?

The doctor's `-O0` suspect, read from the user's own binary or shared object rather than measured:

1. the DWARF producer of each compile unit that includes CuTe/CUTLASS headers (gcc records its switches
   there with -g, -grecord-gcc-switches being its default; no -O switch is gcc's default, -O0);
2. else the out-of-line CuTe/CUTLASS host functions in its symbol table: at -O0 the header templates stay
   out of line by the hundred, optimised they are inlined;
3. else it cannot tell (stripped) and asks for the compile line.

It imports nothing from the package, so it also runs from a plain clone, with no build and no GPU; it needs
pyelftools (`pip install pyelftools`): `python3 python/cutlass_overhead/inspect_binary.py ./your_binary`.
"""

from __future__ import annotations

import os
import sys

if __name__ == "__main__" and sys.path and os.path.realpath(sys.path[0]) == os.path.dirname(os.path.realpath(__file__)):
    sys.path.pop(0)  # run as a script: the package's own modules (trace.py...) must not shadow the standard library

import enum
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

# The exit status for a file that cannot be inspected, or --inspect without one PATH: the doctor's for bad arguments.
BAD_INPUT = 64
USAGE = "usage: python3 inspect_binary.py PATH (an ELF binary or shared object; needs pyelftools, no GPU, no build)"

try:
    from elftools.common.exceptions import DWARFError, ELFError
    from elftools.elf.elffile import ELFFile
    from elftools.elf.sections import SymbolTableSection
except ImportError:
    if __name__ != "__main__":
        raise
    print("inspect_binary.py: needs pyelftools: pip install pyelftools", file=sys.stderr)
    sys.exit(BAD_INPUT)


class Verdict(enum.IntEnum):
    """What --inspect found; the value is its exit status."""

    OPTIMISED = 0
    UNOPTIMISED = 1
    CANNOT_TELL = 2


# Defined functions in namespace cute or cutlass (Itanium mangling: _ZN, cv/ref qualifiers, the namespace's
# length-prefixed name), any binding: a shared object linked with -fvisibility=hidden keeps them as locals.
_NAMESPACE = re.compile(r"_ZN[VKRO]*(?:4(cute)|7(cutlass))")
# The verdict counts CuTe's: its layout algebra is tiny header functions that any -O above 0 inlines, while
# CUTLASS's out-of-line host functions (collectives' members, exception and allocation destructors) remain
# at -O3 too and grow with the number of kernels. From this many on, the host code was not optimised.
# Measured (gcc 12): a CuTe host file (tests/cute_host.cpp) holds 620 cute:: at -O0, 22 at -Og,
# 0 at -O1 and -O3; the SM90 stand-in (repro/sm90_gemm.cu, -O3) 0 cute:: and 12 cutlass::.
UNOPTIMISED_FROM = 64
# The last -O switch of a producer line wins; "-O" alone is -O1.
_O_SWITCH = re.compile(r"(?:^|\s)-O(\w*)(?=\s|$)")


class InspectError(ValueError):
    """The file cannot be inspected (missing, not ELF, unreadable); the message is one line."""


@dataclass(frozen=True)
class Finding:
    verdict: Verdict
    summary: str   # the verdict, one line
    evidence: str  # what it rests on, one line


@dataclass(frozen=True)
class Unit:
    """A compile unit that includes CuTe/CUTLASS headers: its source file and DW_AT_producer."""

    name: str
    producer: str

    def level(self) -> str | None:
        """The -O level it was compiled at ("0", "2", "s", ...), or None where the producer records no switches."""
        if not self.producer.startswith("GNU ") or " -" not in self.producer:
            return None  # clang, or gcc with -gno-record-gcc-switches: the line says nothing about -O
        levels = _O_SWITCH.findall(self.producer)
        return (levels[-1] or "1") if levels else "0"


def inspect(path: Path) -> Finding:
    """Reads `path` (an ELF binary or shared object) and says whether its CUTLASS host code was optimised."""
    try:
        with path.open("rb") as stream:
            elf = ELFFile(stream)
            return _from_producers(elf) or _from_symbols(elf)
    except OSError as error:
        raise InspectError(f"cannot read {path}: {error.strerror or error}") from None
    except (ELFError, DWARFError) as error:
        raise InspectError(f"{path} is not a readable ELF binary or shared object ({error})") from None


def _from_producers(elf: ELFFile) -> Finding | None:
    units = [u for u in _cutlass_units(elf) if u.level() is not None]
    if not units:
        return None
    slow = [u for u in units if u.level() == "0"]
    shown = (slow or units)[0]
    where = f"DW_AT_producer of {shown.name} ({len(slow)} of {len(units)} compile units that include CuTe/CUTLASS " \
            f"headers are at -O0): {shown.producer}"
    if slow:
        return Finding(Verdict.UNOPTIMISED, "the host code that calls CUTLASS was compiled WITHOUT optimisation "
                       "(-O0): rebuild it with -O2 or -O3 (CMake: a Release build)", where)
    return Finding(Verdict.OPTIMISED, f"the host code that calls CUTLASS was compiled with optimisation "
                   f"(-O{shown.level()})", where)


def _cutlass_units(elf: ELFFile) -> Iterator[Unit]:
    """The compile units whose line tables name a file under a cute/ or cutlass/ directory."""
    if not elf.has_dwarf_info():
        return
    dwarf = elf.get_dwarf_info()
    for cu in dwarf.iter_CUs():
        top = cu.get_top_DIE()
        producer = top.attributes.get("DW_AT_producer")
        lines = dwarf.line_program_for_CU(cu)
        if producer is None or lines is None:
            continue
        names = [*lines.header.include_directory, *(entry.name for entry in lines.header.file_entry)]
        if any({b"cute", b"cutlass"} & set((n if isinstance(n, bytes) else n.encode()).split(b"/")) for n in names):
            name = top.attributes.get("DW_AT_name")
            yield Unit(_text(name.value) if name else "?", _text(producer.value))


def _from_symbols(elf: ELFFile) -> Finding:
    tables = {name: elf.get_section_by_name(name) for name in (".symtab", ".dynsym")}
    table = next((n for n, t in tables.items() if isinstance(t, SymbolTableSection)), None)
    cute, cutlass = _out_of_line_functions(tables[table]) if table else (0, 0)
    evidence = (f"{table or 'no symbol table'}: {cute} out-of-line cute:: and {cutlass} cutlass:: host functions "
                f"(unoptimised from {UNOPTIMISED_FROM} cute:: on)")
    if cute >= UNOPTIMISED_FROM:
        return Finding(Verdict.UNOPTIMISED, "the host code that calls CUTLASS was compiled WITHOUT optimisation "
                       "(CuTe's templates are not inlined): rebuild it with -O2 or -O3", evidence)
    if table == ".symtab":
        why = "CuTe's templates are inlined" if cute + cutlass else \
            "no CuTe/CUTLASS function is out of line: all inlined, or this file holds no CUTLASS host code"
        return Finding(Verdict.OPTIMISED, f"the host code that calls CUTLASS was compiled with optimisation ({why})",
                       evidence)
    return Finding(Verdict.CANNOT_TELL, "cannot tell: stripped (no .symtab, and no compile unit that includes "
                   "CuTe/CUTLASS headers records its compiler switches in DWARF); please attach the compile line of "
                   "the file that calls CUTLASS (from compile_commands.json or `make VERBOSE=1`)", evidence)


def _out_of_line_functions(section: SymbolTableSection) -> tuple[int, int]:
    """(cute::, cutlass::) defined functions, each name once."""
    found = {}
    for s in section.iter_symbols():
        match = _NAMESPACE.match(s.name)
        if match and s["st_info"]["type"] == "STT_FUNC" and s["st_shndx"] != "SHN_UNDEF":
            found[s.name] = match.group(1) is not None
    return sum(found.values()), len(found) - sum(found.values())


def _text(value: str | bytes) -> str:
    return " ".join((value.decode(errors="replace") if isinstance(value, bytes) else value).split())


def main(path: str, prog: str) -> int:
    """Prints the verdict and its evidence (two lines on stdout); the exit status is the Verdict, BAD_INPUT for
    a file that cannot be inspected (one line on stderr)."""
    try:
        finding = inspect(Path(path))
    except InspectError as error:
        print(f"{prog}: {error}", flush=True, file=sys.stderr)
        return BAD_INPUT
    print(f"{prog}: {path}: {finding.summary}")
    print(f"evidence: {finding.evidence}")
    return int(finding.verdict)


def script(argv: list[str]) -> int:
    """`python3 inspect_binary.py PATH`, from a clone without the package: the same two lines and exit status."""
    if argv in (["-h"], ["--help"]):
        print(USAGE)
        return 0
    if len(argv) != 1 or not argv[0] or argv[0].startswith("-"):
        print(f"inspect_binary.py: takes one PATH; {USAGE}", file=sys.stderr)
        return BAD_INPUT
    return main(argv[0], "inspect_binary.py")


if __name__ == "__main__":
    sys.exit(script(sys.argv[1:]))
