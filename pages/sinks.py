"""Attention sinks: shipped induction runs of small transformers, softmax against sigmoid and linear."""

import ui
from polarize.web import pages

ui.render(pages.SINKS)
