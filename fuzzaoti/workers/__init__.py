"""The isolation boundary: worker processes that export, compile, load, run and compare a batch
(``execute``), their lifecycle, heartbeats and timeouts (``worker``), the shared queue of compiles
over all of a node's workers (``pool``) and the adaptive batch size (``batch_size``)."""
