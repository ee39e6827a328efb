"""Runs for the app: each made by a backend with a time limit, queued when its workers are busy.

- ``backend``: the protocol every run goes through (submit with a key, a time limit and progress; a
  handle to wait on, cancel and read progress), made by one of three:
- ``local``: this server's pool of worker processes (``worker``: one of them), the default;
- ``cluster``: a Dask cluster's workers, where ``POLARIZE_SCHEDULER`` names one (and the client a
  sweep runs its tasks with);
- ``cluster_admission``: one queue for every replica's runs on that cluster, kept on its scheduler;
- ``inprocess``: the calling process (``POLARIZE_APP_INPROCESS``);
- ``runner``: ``run_with_timeout``, ``call_with_timeout`` and ``submit`` on the backend it chooses;
- ``errors``: why a run gave no result (``RunTimeout``, ``WorkerCrashed``, ``ServerBusy``, ...);
- ``admission``: the queue in front of each backend (``ServerBusy`` when it would wait too long);
- ``training``: a live transformer training, one at a time on the host, through the same backend;
- ``cache``: ``SharedCache``, views shared by every session, each computed once.

Nothing here draws or imports Streamlit; ``polarize.web`` calls it.
"""
