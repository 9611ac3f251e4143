"""The order make test's workers take the tests in (conftest.heads_of_shares): the tests marked early
head the shares pytest-xdist's worksteal first hands out, a file's together, and no test is lost or
run twice."""

from __future__ import annotations

from conftest import heads_of_shares


def shares(order: list[str], workers: int) -> list[list[str]]:
    """order cut as worksteal's first distribution cuts it: each worker the count still to hand out over
    the workers yet to serve."""
    out, at = [], 0
    for w in range(workers):
        size = (len(order) - at) // (workers - w)
        out.append(order[at:at + size])
        at += size
    return out


def test_early_groups_head_the_shares_and_every_test_stays_once() -> None:
    groups = [["a1", "a2"], ["b1"], ["c1", "c2", "c3"], ["d1"], ["e1"]]
    rest = [f"r{k}" for k in range(41)]
    for workers in (1, 2, 3, 4, 6):
        order = heads_of_shares(groups, rest, workers)
        assert sorted(order) == sorted([t for g in groups for t in g] + rest), workers
        for w, share in enumerate(shares(order, workers)):
            heads = [t for g in groups[w::workers] for t in g]
            assert share[:len(heads)] == heads, (workers, w, share)
            assert [t for t in share if t.startswith("r")] == sorted(
                (t for t in share if t.startswith("r")), key=lambda t: int(t[1:])), "the rest keeps its order"


def test_more_early_tests_than_a_share_holds_are_all_kept() -> None:
    groups = [[f"g{k}"] for k in range(9)]
    order = heads_of_shares(groups, ["r0", "r1"], 4)
    assert sorted(order) == sorted([f"g{k}" for k in range(9)] + ["r0", "r1"])
