# polarize as a container: Hugging Face Spaces (sdk: docker, app_port 7860) or any Docker host.
#   docker build -t polarize .                          # the app alone
#   docker build -t polarize --build-arg EXPORT=1 .     # plus kaleido and Chromium for PNG/SVG export
#   docker build -t polarize --build-arg SINKS=1 .      # plus JAX: live training on the Attention sinks page
#   docker build -t polarize-cluster --build-arg CLUSTER=1 .  # plus Dask: replicas, scheduler, workers (deploy/)
#   docker run --rm -p 7860:7860 polarize
# tests/test_deploy.py builds the same environment without Docker (a fresh venv, the same
# requirements, files and CMD) and checks that it serves; keep the two in step.
# The base image by digest, so a rebuild gets the same bytes (a tag moves). This is the digest of
# python:3.11-slim that two independent public projects pin (one through AWS's mirror of Docker's
# library); it was not checked against the registry when written (no network then). To move it:
#   docker buildx imagetools inspect python:3.11-slim   # the "Digest:" line
FROM python:3.11-slim@sha256:9c900dea9e8fb7e16277c179b555cc72d29a352dbc33cff48ad5a0412fd5bfc7

ARG EXPORT=0
ARG SINKS=0
ARG CLUSTER=0
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    POLARIZE_HOSTED=1

RUN if [ "$EXPORT" = "1" ]; then \
        apt-get update && apt-get install -y --no-install-recommends chromium \
        && rm -rf /var/lib/apt/lists/*; \
    fi

# Dependencies first (a layer that changes only with the locks: requirements.lock holds every
# package the app needs, locks/EXTRA.lock those and an extra's at the same versions, each pinned
# with its hashes; `bash locks/make` makes them from pyproject.toml), then the build backend from
# locks/build.lock, so that the wheel is built without fetching anything unpinned; then the package
# as a wheel built from a copy of its sources, which is then removed: the app imports the installed
# package, never a source folder beside it.
COPY requirements.lock /tmp/src/
COPY locks /tmp/src/locks
RUN pip install --require-hashes -r /tmp/src/requirements.lock \
    && if [ "$EXPORT" = "1" ]; then pip install --require-hashes -r /tmp/src/locks/export.lock; fi \
    && if [ "$SINKS" = "1" ]; then pip install --require-hashes -r /tmp/src/locks/sinks.lock; fi \
    && if [ "$CLUSTER" = "1" ]; then pip install --require-hashes -r /tmp/src/locks/sweep.lock; fi \
    && pip install --require-hashes -r /tmp/src/locks/build.lock
COPY pyproject.toml README.md /tmp/src/
COPY polarize /tmp/src/polarize
RUN pip wheel --no-deps --no-build-isolation -w /tmp/wheels /tmp/src \
    && pip install --no-deps /tmp/wheels/*.whl \
    && rm -rf /tmp/src /tmp/wheels

# Spaces runs the container as user 1000. The app's code belongs to root and is read-only to that
# user (the app writes nothing there; a hosted server keeps decks in memory), in /app: a folder of
# root's, so the user cannot rename it and put its own app.py in its place, as it could inside its
# own home (/home/app, where it keeps what it writes).
RUN useradd --create-home --uid 1000 app
WORKDIR /app
COPY app.py server.py ./
COPY ui ./ui
COPY pages ./pages
COPY .streamlit ./.streamlit
# plotly.js, which the app serves at app/static/ for its figures (ui/plotly_js.py), copied from the
# installed plotly package now, and its packed copy (gzipped once, what server.py sends a browser): the
# app's folder is read-only to its user.
RUN python -c "import sys; from ui.plotly_js import publish; sys.exit(publish() is None)"
RUN chmod -R u=rwX,go=rX /app

USER app
EXPOSE 7860
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:7860/_stcore/health', timeout=4)"]
CMD ["streamlit", "run", "server.py", "--server.port=7860", "--server.address=0.0.0.0"]
