"""The verified path over corpora larger than memory: shards streamed from disk (or
frames given one at a time) within a memory limit, and a corpus store that new data is
checked against without reading the old shards again."""

from .corpus import CorpusStore
from .run import ShardRun, cluster_shards, dedupe_shards, near_duplicate_shards, run_shards
from .sources import FileSource, FrameSource, expand_paths, make_source

__all__ = ["CorpusStore", "FileSource", "FrameSource", "ShardRun", "cluster_shards",
           "dedupe_shards", "expand_paths", "make_source", "near_duplicate_shards",
           "run_shards"]
