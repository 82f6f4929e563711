"""Campaigns beyond one process: a campaign split into shards (``shards``), each a task of its
own with its own node-local corpus, merged afterwards (``fuzzaoti.corpus.merge``)."""
