"""GIF and MP4 clips of the animated figures (``polarize animate``, the pages' clip downloads).

- ``animate``: the clip of a run or of any animated figure;
- ``frames``: each frame's picture, the still parts through the static export once per clip;
- ``draw``: Pillow drawing of what moves (lines, markers, heatmap cells, titles).

Optional: needs the ``animate`` extra (kaleido, Pillow, imageio, imageio-ffmpeg) and a Chromium.
"""
