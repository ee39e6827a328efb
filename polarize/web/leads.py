"""What each page is, in two sentences for a newcomer, and the Explorer's guided first visit.

The renderer shows a page's lead under its title (not in presentation mode, where the lecturer
speaks it) and a page's tour, if it has one, in a box that is open on the first visit of the
session and folded after. Written for a student who has never heard of the paper.
"""

from __future__ import annotations

__all__ = ["LEADS", "OTHER_MAP_LEAD", "TOURS"]

LEADS: dict[str, str] = {
    "explorer": (
        "A tiny model turns one number per token (its logits a) into scores s = softmax(a) that add "
        "up to 1, and training by gradient flow pushes almost all of the score onto one token (the "
        "Normalizer menu swaps softmax for maps that may not). Press Play on the figure and watch the "
        "dot on the simplex run into a corner."),
    "normalizers": (
        "One start, trained with every normalizer, each a different way of turning logits into scores. "
        "Press Play and see which of them end with a single token holding all the score."),
    "losses": (
        "The same start under the logistic, square and cross-entropy losses, then the paper's "
        "regression at several condition numbers: there the worse conditioned the design, the more "
        "polarized the scores by the end. Press Play and compare how fast each loss picks its winner."),
    "tied": (
        "When the values are tied to the logits, training grows one column far larger than all the "
        "others, like the massive activations of trained transformers. Press Play and watch the "
        "largest column pull away."),
    "descent": (
        "The exact gradient flow against gradient descent with a few step sizes, all from one start. "
        "Press Play: small steps retrace the flow, large ones drift to another token or blow up."),
    "rates": (
        "Polarization never finishes: under the logistic loss the others' share shrinks only like "
        "1/log\u00b2 t. Press Play to see it on the figure, then compare the fitted slope under it "
        "with the predicted one."),
    "phase": (
        "The directions the scores move in, drawn over the whole simplex, with the points where they "
        "rest and which token wins from each start. Click a point of the map to start a run there."),
    "sinks": (
        "A small transformer trained on a copying task learns to put most of a head's attention on "
        "the first token, an attention sink, by the same rich-get-richer force. The figure and the "
        "numbers under it open at the end of training; play the training to see the sink form."),
    "sweeps": (
        "Many runs at once, over a grid of settings such as the number of tokens and the start's "
        "scale, read from a saved sweep. Pick a measure and see for which settings the scores "
        "end polarized."),
    "maths": (
        "The model, its replicator form and why softmax polarizes, in a few formulas with live "
        "figures. Read it before or after the Explorer; its last section says what to look for there."),
    "deck": (
        "A deck is a list of this app's views, each with a title and speaker notes, to present in "
        "turn. Add a view from any page's sidebar, then present the deck from here."),
}
"""Page name -> its lead: two sentences, what you are looking at and what to try first."""

OTHER_MAP_LEAD = (
    "A tiny model turns one number per token (its logits a) into scores s = \u03c3(a), here with the "
    "normalizer {label} in place of softmax, and trains it by gradient flow. Press Play on the figure and "
    "see whether the dot runs into a corner of the simplex.")
"""The Explorer's lead with another normalizer than softmax chosen (``{label}``, its registry label): the
softmax lead's promise of a corner is the verdict's to make there."""

TOURS: dict[str, tuple[str, ...]] = {
    "explorer": (
        "Press **\u25b6 Play** on the figure (or Space with the pointer on it); **Step \u25b6** "
        "moves one frame, **|\u25c0 Reset** goes back to the start.",
        "**Simplex of scores**: each corner is a token, numbered in its colour (the key to every "
        "panel), and the dot is the scores s. It starts in the centre (every token equal); "
        "polarization is the dot running into one corner.",
        "**Scores s\u1d62(t)**: one line per token. One climbs towards 1 and the others end low, some "
        "after rising for a while (3 of the other 7 from the default start); the time axis is "
        "logarithmic, so most of it happens late.",
        "**Entropy H(s(t))**: how spread out the scores are. It starts at log n (uniform) and falls "
        "towards 0 as one token takes over.",
        "**Fitness vs score**: the repulsion, each token's fitness against its score. The logits of "
        "tokens right of the dashed mean rise and the others' fall (a share need not follow its logit "
        "at once): the rich get richer.",
        "**Loss**: it keeps falling but never reaches 0, so the flow never stops pushing.",
        "Then try another **Normalizer** in the sidebar (only softmax has this replicator form; from "
        "the default start L2 and sparsemax polarize too, each in its own way, while sigmoid does "
        "not), or **New random start**. The verdict on the right is about the end of the run.",
    ),
}
"""Page name -> the steps of its guided first visit (markdown, our own text)."""
