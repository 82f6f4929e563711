"""One campaign, many tasks: which programs each task checks, and the seed it draws them with.

Task ``k`` of ``n`` draws from a Hypothesis stream of its own (the campaign's seed and its index:
a rerun of task k draws what task k drew) and keeps only the programs whose content hash falls
in its shard, so no two tasks ever check the same program, however their draws meet.
"""

from __future__ import annotations

from fuzzaoti.errors import InvalidArgument


def check_shard(shard: int, shards: int) -> None:
    if shards < 1 or not 0 <= shard < shards:
        raise InvalidArgument(f"shard {shard} of {shards}: a shard is 0 to {shards - 1} of at least 1")


def parse_shard(text: str) -> tuple[int, int]:
    """``"K/N"`` (task K of N, from 0) as ``(K, N)``."""
    k, slash, n = text.partition("/")
    if not slash or not k.strip().isdigit() or not n.strip().isdigit():
        raise InvalidArgument(f"--shard {text!r}: give it as K/N, task K (from 0) of N, e.g. 0/4")
    check_shard(int(k), int(n))
    return int(k), int(n)


def shard_seed(seed: int, shard: int, shards: int) -> int | str:
    """The seed of task ``shard``'s draws: the campaign's own when it is the only task."""
    return seed if shards == 1 else f"{seed}/shard {shard} of {shards}"


def in_shard(program_id: str, shard: int, shards: int) -> bool:
    """Whether a program (by its content hash) is task ``shard``'s to check."""
    return int(program_id[:8], 16) % shards == shard
