"""Runs for the app: each in a worker process with a time limit, queued when the workers are busy.

- ``runner``: ``run_with_timeout`` and ``call_with_timeout`` over a pool of worker processes;
- ``worker``: one worker process, which imports the engine once and runs the calls it is sent;
- ``admission``: the queue in front of the workers (``ServerBusy`` when it would wait too long);
- ``cluster``: the same runs on a Dask cluster, where ``POLARIZE_SCHEDULER`` names one;
- ``cluster_admission``: one queue for every replica's runs on that cluster, kept on its scheduler;
- ``training``: a live transformer training in a child process, one at a time on the host;
- ``cache``: ``SharedCache``, views shared by every session, each computed once.

Nothing here draws or imports Streamlit; ``polarize.web`` calls it.
"""
