"""The layers of the C and assembly sources: nothing includes a higher one.

From the bottom: lib (portable code the host also compiles and tests;
lib/freestanding is what a C library would give the kernel), arch (IA-32
specifics; boot's entry is at the same level), kernel (platform services),
runtime (fibers, synchronisation, isolated threads), bench (the harness and
the benchmarks), app (the program's top). hosted/ is the Linux build: it
implements lower interfaces for a process and is its own program's top, so
it sits above app and nothing includes it. docs/LAYOUT.md says the same.

Within and across layers, modules (a .c with its .h) include each other's
headers without a circle, so that they too stand one above another.

Nor does a layer's header name what only a higher layer defines (arch/x86.h
once declared a hook that only hosted/smp.c defined): every function or
variable a header declares is defined (in C, or global in assembly) in its
own layer or below, or nowhere this test can see (the linker script, a
macro)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Iterator

import pytest

REPO = Path(__file__).resolve().parent.parent
LAYERS = ("lib", "arch", "kernel", "runtime", "bench", "app", "hosted")
RANK = {name: i for i, name in enumerate(LAYERS)} | {"boot": LAYERS.index("arch")}
INCLUDE = re.compile(r'^\s*(?:#\s*include|%include)\s+"([^"]+)"', re.M)
# What C text holds besides declarations: comments and literals, then directives
C_NOISE = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
DIRECTIVE = re.compile(r'^[ \t]*#(?:[^\n]*\\\n)*[^\n]*', re.M)
ATTRIBUTE = re.compile(r'\b__attribute__\s*\(\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)\)')
IDENT = re.compile(r'[A-Za-z_]\w*')
ASM_GLOBAL = re.compile(r'^\s*global\s+([^;\n]+)', re.M)


def sources(root: Path) -> list[Path]:
    return sorted(p for top in RANK for p in (root / top).rglob("*")
                  if p.suffix in (".c", ".h", ".asm", ".inc") and p.is_file())


def layer_of(rel: str) -> str | None:
    top = rel.split("/", 1)[0]
    return top if top in RANK else None


def include_problems(root: Path) -> list[str]:
    """Every include that reaches up a layer, or names a file that is not
    in a layer, as 'file:line: includes "x" (layer a below layer b)'."""
    problems = []
    for path in sources(root):
        rel = path.relative_to(root).as_posix()
        text = path.read_text()
        for m in INCLUDE.finditer(text):
            target, line = m.group(1), text.count("\n", 0, m.start()) + 1
            where = f"{rel}:{line}: includes \"{target}\""
            to = layer_of(target)
            if to is None or not (root / target).is_file():
                problems.append(f"{where}, which is not a file of any layer ({', '.join(LAYERS)})")
            elif RANK[to] > RANK[layer_of(rel) or "lib"]:
                problems.append(f"{where}: {layer_of(rel)} is below {to}")
    return problems


def module_of(rel: str) -> str:
    """A source's module: its path without the suffix (arch/lapic.h and
    arch/lapic.c are both arch/lapic: one header per source)."""
    return rel.rsplit(".", 1)[0]


def include_graph(root: Path) -> dict[str, set[str]]:
    """Module X -> the modules whose headers X's files include."""
    graph: dict[str, set[str]] = {}
    for path in sources(root):
        rel = path.relative_to(root).as_posix()
        edges = graph.setdefault(module_of(rel), set())
        for m in INCLUDE.finditer(path.read_text()):
            if layer_of(m.group(1)) is not None:
                edges.add(module_of(m.group(1)))
    for module, edges in graph.items():
        edges.discard(module)  # arch/lapic.c including arch/lapic.h is no circle
    return graph


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    """The modules that start's includes lead to, directly or not."""
    seen: set[str] = set()
    todo = list(graph.get(start, ()))
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(graph.get(module, ()))
    return seen


def shortest_way_back(graph: dict[str, set[str]], start: str) -> list[str]:
    """The modules from start along the shortest way back to it (start first,
    ties broken by name)."""
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for module in frontier:
            for nxt in sorted(graph.get(module, ())):
                if nxt == start:
                    way = [module]
                    while way[-1] != start:
                        way.append(came_from[way[-1]])
                    return way[::-1]
                if nxt not in came_from:
                    came_from[nxt] = module
                    following.append(nxt)
        frontier = following
    raise ValueError(f"{start} is on no circle")


def include_circles(root: Path) -> list[str]:
    """Modules that reach each other through includes, one circle per such
    set as 'a -> b -> c -> a': from the set's first module by name along the
    shortest way back, followed by the whole set when it holds more."""
    graph = include_graph(root)
    reach = {module: reachable(graph, module) for module in graph}
    circles = []
    for module in sorted(graph):
        if module not in reach[module]:
            continue
        knot = {m for m in reach[module] if module in reach.get(m, ())}
        if module != min(knot):
            continue
        way = shortest_way_back(graph, module)
        circle = " -> ".join(way + [module])
        if len(knot) > len(way):
            circle += f" (of {len(knot)} that reach each other: {', '.join(sorted(knot))})"
        circles.append(circle)
    return circles


def blanked(text: str) -> str:
    """text with every character but newlines a space: offsets and lines kept."""
    return "\n".join(" " * len(line) for line in text.split("\n"))


def blank_matches(pattern: re.Pattern[str], text: str) -> str:
    return pattern.sub(lambda m: blanked(m.group()), text)


def outer_braces_only(code: str) -> str:
    """code with whatever is inside file-scope braces blanked (bodies, members,
    initializers), the braces kept."""
    out, depth, last = [], 0, 0
    for m in re.finditer(r"[{}]", code):
        if m.group() == "{":
            if depth == 0:
                out.append(code[last:m.end()])
                last = m.end()
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                out.append(blanked(code[last:m.start()]))
                last = m.start()
    out.append(code[last:])
    return "".join(out)


def file_scope(text: str) -> Iterator[tuple[int, bool, str]]:
    """Each file-scope statement of C text as (offset, is a function
    definition, the statement up to its ';' or the definition's head up to
    its body), comments, literals, directives, attributes and inner braces
    blanked."""
    code = blank_matches(DIRECTIVE, blank_matches(C_NOISE, text))
    code = blank_matches(ATTRIBUTE, outer_braces_only(code))
    start, in_body = 0, False
    for m in re.finditer(r"[;{}]", code):
        c, head = m.group(), code[start:m.start()]
        if c == "{" and not in_body and head.rstrip().endswith(")") and "=" not in head:
            yield start, True, head
            in_body = True
        elif c == "}" and in_body:
            start, in_body = m.end(), False
        elif c == ";" and not in_body:
            yield start, False, head
            start = m.end()


def split_top(text: str, sep: str) -> list[tuple[int, str]]:
    """text cut at each sep outside brackets, as (offset, piece)."""
    pieces, depth, last = [], 0, 0
    for m in re.finditer(r"[][(){}" + sep + "]", text):
        c = m.group()
        depth += (c in "([{") - (c in ")]}")
        if c == sep and depth == 0:
            pieces.append((last, text[last:m.start()]))
            last = m.end()
    return pieces + [(last, text[last:])]


def declarators(statement: str) -> list[tuple[int, str, bool]]:
    """The names a statement declares, as (offset, name, is a function):
    'int a, b[4] = {..}' -> a, b; 'void (*hook)(int)' -> hook, a variable;
    'void f(int x)' -> f; 'struct s {..}' and 'struct s' -> nothing."""
    names = []
    for at, piece in split_top(statement, ","):
        piece = split_top(piece, "=")[0][1].rstrip()
        if not piece.strip() or piece.endswith("}") or re.fullmatch(r"\s*(?:struct|union|enum)\s+\w+", piece):
            continue
        if piece.endswith(")"):
            paren = piece.index("(")
            pointer = re.match(r"\(\s*\*[\s\w]*?(\w+)\s*\)", piece[paren:])
            if pointer:
                names.append((at + paren + pointer.start(1), pointer.group(1), False))
            elif words := list(IDENT.finditer(piece[:paren])):
                names.append((at + words[-1].start(), words[-1].group(), True))
        elif words := list(IDENT.finditer(re.sub(r"\[[^\]]*\]", lambda m: blanked(m.group()), piece))):
            names.append((at + words[-1].start(), words[-1].group(), False))
    return [n for n in names if n[1] != "_Static_assert"]


def c_symbols(text: str, header: bool) -> Iterator[tuple[int, str]]:
    """What C text declares, if a header (prototypes, extern variables), or
    else defines (functions with a body, variables not extern), as (offset,
    name); never what is static or a typedef."""
    for start, body, statement in file_scope(text):
        words = set(IDENT.findall(statement))
        if words & {"static", "typedef"}:
            continue
        names = declarators(statement)
        if body:  # a function's definition: the head's last declarator is its name
            if names and not header:
                yield start + names[-1][0], names[-1][1]
            continue
        for at, name, function in names:
            if header == (function or "extern" in words):
                yield start + at, name


def declarations_and_definitions(root: Path) -> tuple[list[tuple[str, int, str]], dict[str, set[str]]]:
    """Every header's declarations as (header, line, name), and name -> the
    .c and .asm files that define it (every file of a layer counts, those
    only one build compiles too: the link checks that each build has a
    definition, this where it lies)."""
    declared: list[tuple[str, int, str]] = []
    defined: dict[str, set[str]] = {}
    for path in sources(root):
        rel, text = path.relative_to(root).as_posix(), path.read_text()
        if path.suffix in (".asm", ".inc"):
            names = (n.split(":")[0].strip() for m in ASM_GLOBAL.finditer(text) for n in m.group(1).split(","))
            for name in names:
                defined.setdefault(name, set()).add(rel)
        elif path.suffix == ".h":
            declared += [(rel, text.count("\n", 0, at) + 1, name) for at, name in c_symbols(text, header=True)]
        else:
            for _, name in c_symbols(text, header=False):
                defined.setdefault(name, set()).add(rel)
    return declared, defined


def declaration_problems(root: Path) -> list[str]:
    """Every header declaration whose only definitions lie in higher layers,
    as 'header:line: declares name, which only file defines: a is below b'."""
    declared, defined = declarations_and_definitions(root)
    problems = []
    for header, line, name in declared:
        files = sorted(defined.get(name, ()))
        above = sorted({layer_of(f) or "" for f in files}, key=RANK.__getitem__)
        if files and all(RANK[layer] > RANK[layer_of(header) or "lib"] for layer in above):
            which = " and ".join(files) + (" define" if len(files) > 1 else " defines")
            problems.append(f"{header}:{line}: declares {name}, which only {which}: "
                            f"{layer_of(header)} is below {' and '.join(above)}")
    return problems


def test_no_include_reaches_a_higher_layer() -> None:
    assert sources(REPO), "no sources found"
    problems = include_problems(REPO)
    assert not problems, "upward or unknown includes:\n" + "\n".join(problems)


def test_no_header_declares_what_only_a_higher_layer_defines() -> None:
    """A declaration is a promise the layer keeps: arch/ that declares a
    function only hosted/ defines cannot be built, read or tested without
    the layer above it."""
    problems = declaration_problems(REPO)
    assert not problems, "declarations of what only a higher layer defines:\n" + "\n".join(problems)


def test_no_include_circle() -> None:
    """Inside one layer too, modules stand one above another: a circle (as
    arch/lapic -> arch/msr -> arch/trap -> arch/lapic was) leaves none of its
    modules below the others, to read or to test first."""
    circles = include_circles(REPO)
    assert not circles, "modules that include each other's headers in a circle:\n" + "\n".join(circles)


def test_every_source_folder_is_a_layer() -> None:
    """A new top-level folder of C must be placed in the order, not missed."""
    folders = {p.relative_to(REPO).parts[0] for p in REPO.glob("*/**/*.[ch]")
               if p.relative_to(REPO).parts[0] not in ("tests", "tools", "build", ".venv", "results")}
    assert folders <= set(RANK), f"folders of C outside the layers: {sorted(folders - set(RANK))}"


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    for top in RANK:
        if (REPO / top).is_dir():
            shutil.copytree(REPO / top, tmp_path / top)
    return tmp_path


def test_a_planted_upward_include_is_named(tree: Path) -> None:
    assert include_problems(tree) == []
    victim = tree / "arch" / "cpu.c"
    victim.write_text('#include "bench/harness.h"\n' + victim.read_text())
    problems = include_problems(tree)
    assert problems == ['arch/cpu.c:1: includes "bench/harness.h": arch is below bench']


def test_a_planted_include_of_hosted_or_a_missing_file_is_named(tree: Path) -> None:
    (tree / "bench" / "x.c").write_text('#include "lib/fmt.h"\n#include "hosted/platform.h"\n')
    (tree / "kernel" / "y.asm").write_text('%include "arch/nothing.inc"\n')
    problems = include_problems(tree)
    assert problems == ['bench/x.c:2: includes "hosted/platform.h": bench is below hosted',
                        'kernel/y.asm:1: includes "arch/nothing.inc", which is not a file of any layer '
                        '(lib, arch, kernel, runtime, bench, app, hosted)']


def test_a_planted_circle_is_named(tree: Path) -> None:
    assert include_circles(tree) == []
    trap = tree / "arch" / "trap.c"
    trap.write_text('#include "arch/lapic.h"\n' + trap.read_text())
    assert include_circles(tree) == ["arch/lapic -> arch/msr -> arch/trap -> arch/lapic"]


def test_a_planted_circle_across_layers_is_named_whole(tree: Path) -> None:
    (tree / "lib" / "a.h").write_text('#include "kernel/b.h"\n')
    (tree / "kernel" / "b.c").write_text('#include "kernel/b.h"\n#include "runtime/c.h"\n')
    (tree / "kernel" / "b.h").write_text("")
    (tree / "runtime" / "c.h").write_text('#include "lib/a.h"\n#include "kernel/b.h"\n')
    assert include_circles(tree) == [
        "kernel/b -> runtime/c -> kernel/b (of 3 that reach each other: kernel/b, lib/a, runtime/c)"]


def test_a_planted_declaration_of_a_higher_layers_symbol_is_named(tree: Path) -> None:
    assert declaration_problems(tree) == []
    x86 = tree / "arch" / "x86.h"
    text = x86.read_text()
    at = text.index("static inline void cpu_pause(void)")  # where the hook's declaration once was
    x86.write_text(text[:at] + "void hosted_wait_yield(void);\n" + text[at:])
    line = text.count("\n", 0, at) + 1
    assert declaration_problems(tree) == [
        f"arch/x86.h:{line}: declares hosted_wait_yield, which only hosted/smp.c defines: arch is below hosted"]


def test_every_shape_of_declaration_and_definition_is_read(tree: Path) -> None:
    (tree / "lib" / "a.h").write_text(
        "/* int in_a_comment(void); */\n"
        "extern int a_count, a_table[4];\n"
        "extern void (*a_hook)(int);\n"
        "int a_twice(int x) __attribute__((const));\n"
        "int a_here(void);\n"
        "static inline int a_inline(void) { return 1; }\n"
        "struct a_s { int member(void); };\n"
        "typedef int a_type(int);\n")
    (tree / "lib" / "a.c").write_text('#include "lib/a.h"\nint a_here(void) { return 0; }\n')
    (tree / "kernel" / "b.c").write_text(
        "static int a_count;\n"
        'int a_table[4] = { 1 }; const char *s = "int a_here(void) {";\n'
        "void (*a_hook)(int);\n"
        "int\na_twice(int x)\n{\n    return 2 * x;\n}\n")
    (tree / "arch" / "c.asm").write_text("global a_count, a_inline:function ; a_here\n")
    (tree / "runtime" / "d.c").write_text("int a_count = 3;\n")
    assert declaration_problems(tree) == [
        "lib/a.h:2: declares a_count, which only arch/c.asm and runtime/d.c define: lib is below arch and runtime",
        "lib/a.h:2: declares a_table, which only kernel/b.c defines: lib is below kernel",
        "lib/a.h:3: declares a_hook, which only kernel/b.c defines: lib is below kernel",
        "lib/a.h:4: declares a_twice, which only kernel/b.c defines: lib is below kernel"]
