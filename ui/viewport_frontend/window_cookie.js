// The window's width, written into the viewport's cookie while the page's head is read: ui/window_cookie.py
// calls this function in every page the app's server sends, after the viewport's meta tag, with the
// cookie's name, how it is kept (ui.viewport.KEPT) and the step widths are rounded down to (as the
// viewport element rounds them, ui/viewport_frontend/viewport.js). It runs before Streamlit's bundle,
// and so before the bundle opens the session whose first run reads the cookie (st.context.cookies).
//
// A cookie the element wrote in a window this wide is kept (it knows the main column's width and the
// theme measured); another is replaced by the width and the theme it measured (the column's width
// differs in another window). Where cookies cannot be written, nothing is written and nothing said:
// the viewport element measures the page and posts, as before.
(args) => {
  try {
    const {cookie, kept: how, step} = args;
    const width = window.innerWidth;
    if (!width) return;
    const window_ = Math.max(step, Math.floor(width / step) * step);
    const mine = document.cookie.split("; ").find((item) => item.startsWith(`${cookie}=`));
    let old = null;
    try {
      old = mine ? JSON.parse(decodeURIComponent(mine.slice(cookie.length + 1))) : null;
    } catch (error) {
      // Not ours to read: replaced.
    }
    old = old && typeof old === "object" ? old : {};
    if (old.window === window_) return;
    const told = {window: window_};
    if (typeof old.dark === "boolean") told.dark = old.dark;
    document.cookie = `${cookie}=${encodeURIComponent(JSON.stringify(told))}; ${how}`;
  } catch (error) {
    // No cookie: the viewport element measures the page and posts what the server assumed wrong.
  }
}
