"""From Programs to something that runs: module source and export dims (``render``), many
Programs merged into one module so one AOTI compile checks a batch (``merge``), the backends
behind one protocol (``backends``), and the fault-injection canaries that prove the loop catches
a miscompile (``canaries``)."""
