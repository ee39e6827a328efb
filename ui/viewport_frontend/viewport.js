// The viewport element (ui/viewport.py): a Streamlit component v2 in the page's own DOM (no iframe)
// that draws nothing and tells the server what it assumed wrong of the window.
//
// Python gives it (data) what it assumed ({window, dark, width, presenting}: the window's width, the
// theme, the main column's width and the mode it is for), the class of the container the app's style
// sheet hides (holder) and the class of the main figure's container (figure). The element posts the
// truth (its state value named data.state, which reruns the view's fragment; widths rounded down to a
// step) only where the assumption is wrong: a width by a step or more, or on the other side of a phone's
// (narrow_below), the theme. The chart element fits each figure to the room below its top itself
// (ui/chart_frontend/chart.js), so a first visit in the window the server assumes posts nothing. Each
// post is also kept in a cookie (data.cookie), so that the browser's next session is fitted from its
// first run.
//
// Read only from what is documented: the window (innerWidth), the main figure's container by its key's
// class (.st-key-<key>), the theme from the CSS variables Streamlit gives a v2 component
// (--st-background-color, --st-text-color), the document's fonts. Measured after the element is drawn
// (Streamlit calls this module again when what it is given or the theme changes), when the main figure,
// the block holding this element or the hidden container change size (ResizeObserver) and on resize;
// debounced, and posted only once two looks in a row agree. Only once the page's layout is final: the
// app's style sheet in effect (it hides this element's container: the holder's size changes) and the
// fonts loaded (before, the text above the figure may still reflow), or after wait_ms without them.

const SOON_MS = 50;  // between two looks that must agree before a post

// "rgb(r, g, b)" or "rgba(r, g, b, a)" (a computed colour) -> relative luminance; null if not read, or
// transparent (no theme variable: nothing said).
function luminance(color) {
  const parts = /rgba?\(([^)]+)\)/.exec(color || "");
  if (!parts) return null;
  const values = parts[1].split(",").map((x) => parseFloat(x));
  if (values.length > 3 && values[3] === 0) return null;
  const [r, g, b] = values.slice(0, 3).map((x) => x / 255);
  if ([r, g, b].some((x) => !Number.isFinite(x))) return null;
  const linear = (c) => (c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
  return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
}

// Whether the page shows a dark theme: its background darker than its text, read from the theme's CSS
// variables on this element's box (its style says color: var(--st-text-color) and so on).
function darkTheme(box) {
  const style = getComputedStyle(box);
  const ground = luminance(style.backgroundColor);
  const text = luminance(style.color);
  return ground !== null && text !== null && ground < text;
}

// What keeps the page's layout from being final, in a word (null: nothing). "style": the app's style
// sheet is not in effect yet (the holder, which it hides, still shows); "fonts": the document is
// loading fonts, which may reflow the text above the figure.
function unsteady(view) {
  const holder = view.holder;
  if (holder && getComputedStyle(holder).display !== "none") return "style";
  if (document.fonts && document.fonts.status !== "loaded") return "fonts";
  return null;
}

// The main column's width, from the container the renderer keeps for the page's main figure (null:
// none shown). The container found is watched: its width changes with the column's.
function mainFigure(view) {
  const place = document.querySelector(`.${view.args.figure}`);
  if (place !== view.figure) {
    if (view.figure) view.observer.unobserve(view.figure);
    view.figure = place;
    if (place) view.observer.observe(place);
  }
  if (!place || place.getClientRects().length === 0) return null;
  const width = place.getBoundingClientRect().width;
  return width > 0 ? width : null;
}

function report(view) {
  const {box, args} = view;
  clearTimeout(view.timer);
  delete box.dataset.pending;
  const width = window.innerWidth;
  if (!width) return;
  const waiting = unsteady(view);
  if (waiting !== null && !view.patient) {  // the observers, or the fonts when loaded, look again
    box.dataset.waiting = waiting;
    if (waiting === "fonts" && !view.fonts) {  // a look once they are in
      view.fonts = true;
      document.fonts.ready.then(() => { view.fonts = false; view.resized(); });
    }
    if (view.patience === null) {
      view.patience = setTimeout(() => { view.patient = true; report(view); }, args.wait_ms);
    }
    return;
  }
  if (waiting === null) {  // a later wait (a page's new fonts) has its own patience
    clearTimeout(view.patience);
    view.patience = null;
    view.patient = false;
  }
  delete box.dataset.waiting;
  const step = args.step;
  const down = (px) => Math.max(step, Math.floor(px / step) * step);
  const assumed = args.assumed || {};
  const column = mainFigure(view);
  const truth = {window: down(width),
                 dark: darkTheme(box),
                 // No main figure (a page without one, an error): the column is as assumed.
                 width: column !== null ? down(column) : assumed.width,
                 presenting: assumed.presenting === true};
  const text = JSON.stringify(truth);
  // Wrong by a step or more, or on the other side of a phone's width: the server is told.
  const off = (a, b) => typeof b !== "number" || Math.abs(a - b) >= step;
  const narrow = (w) => w < args.narrow_below;
  const wrong = off(width, assumed.window) || narrow(width) !== narrow(assumed.window)
    || truth.dark !== (assumed.dark === true) || (column !== null && off(column, assumed.width));
  if (wrong && text !== view.posted) {
    if (text !== view.looked) {  // the layout may still be moving: post only what two looks in a row saw
      view.looked = text;
      later(view, SOON_MS);
      return;
    }
    view.posted = text;
    view.post(args.state, truth);
    remember(args.cookie, args.kept, truth);
  }
  // For a look from outside (and the browser tests): what was measured, and what is posted.
  box.dataset.measured = text;
  box.dataset.posted = view.posted || "";
}

// The measure kept in a cookie for the next session of this browser (ui/viewport.py reads it from the
// page's first request).
function remember(cookie, kept, truth) {
  try {
    document.cookie = `${cookie}=${encodeURIComponent(JSON.stringify(truth))}; ${kept}`;
  } catch (error) {
    // Not writable: the next session measures again.
  }
}

function later(view, ms) {
  clearTimeout(view.timer);
  view.box.dataset.pending = "1";  // for a look from outside: a measure is to come
  view.timer = setTimeout(() => report(view), ms === undefined ? view.args.debounce_ms : ms);
}

// The element's box (drawn nothing, its colours the theme's) and what it knows, kept on its container
// across calls.
function viewOf(parentElement) {
  if (parentElement.__polarizeViewport) return parentElement.__polarizeViewport;
  const box = document.createElement("div");
  box.className = "polarize-viewport";
  box.style.cssText = "color: var(--st-text-color); background-color: var(--st-background-color);";
  parentElement.appendChild(box);
  const view = {box, args: null, post: null, posted: null, looked: null, timer: null, patience: null,
                patient: false, fonts: false, holder: null, figure: null, observer: null, resized: null,
                watched: []};
  view.resized = () => later(view);
  view.observer = new ResizeObserver(view.resized);
  window.addEventListener("resize", view.resized);
  parentElement.__polarizeViewport = view;
  return view;
}

export default function (component) {
  const {parentElement, data, setStateValue} = component;
  if (!data || typeof data !== "object") return undefined;
  const view = viewOf(parentElement);
  if (view.args === null || JSON.stringify(data.assumed) !== JSON.stringify(view.args.assumed)) {
    view.posted = null;  // Python has taken a value in (or this is the first): what it assumes is new
  }
  view.args = data;
  view.post = setStateValue;
  // The hidden container (its size changes when the app's style hides it) and the block around it
  // (it grows when the main figure comes): a change of either may change the layout measured.
  const holder = parentElement.closest(`.${data.holder}`);
  const watched = holder ? [holder, holder.parentElement].filter(Boolean) : [];
  if (holder !== view.holder) {
    for (const node of view.watched) view.observer.unobserve(node);
    for (const node of watched) view.observer.observe(node);
    view.holder = holder;
    view.watched = watched;
  }
  requestAnimationFrame(() => report(view));  // once drawn
  // Streamlit keeps the last call's answer, and calls it when the element goes.
  return () => {
    clearTimeout(view.timer);
    clearTimeout(view.patience);
    view.observer.disconnect();
    window.removeEventListener("resize", view.resized);
    delete parentElement.__polarizeViewport;
  };
}
